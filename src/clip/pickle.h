// A restricted unpickler: it reads Python pickle bytes (protocols 2-5) into plain values and
// executes nothing. It knows only the opcodes that containers, numbers, strings, persistent ids and
// calls of allowed globals need; any other opcode, and any global not in the caller's allow-list,
// is refused with one line naming it (`posix system`). A call (REDUCE) is not performed: it becomes a
// kCall value (callable + argument tuple) for the caller to interpret, except globals marked
// kEmptyDict (collections.OrderedDict), whose call with no arguments makes an empty dict.
//
// Values live in one arena and refer to each other by index, so no structure the bytes describe
// (deep nesting, a list that contains itself through the memo) makes parsing or destruction recurse,
// and memory is bounded by a constant times the input length. Internal to the clip module.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "visalign/core/status.h"

namespace visalign::clip {

enum class PickleKind {
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kBytes,
  kTuple,
  kList,
  kDict,
  kGlobal,
  kPersistentId,
  kCall
};

struct PickleValue {
  PickleKind kind = PickleKind::kNone;
  int64_t integer = 0;  // kBool (0/1), kInt
  double real = 0;      // kFloat
  std::string text;     // kString / kBytes; kGlobal "module name" (as the GLOBAL opcode spells it)
  // kTuple/kList: elements; kDict: key, value, key, value, ... in insertion order (a later
  // SETITEM of an equal key is not merged: state dicts never repeat one); kPersistentId: the id;
  // kCall: callable, argument tuple.
  std::vector<uint32_t> items;
};

// How an allowed global may be used.
enum class GlobalUse {
  kEmptyDict,  // calling it with () gives an empty dict (collections.OrderedDict)
  kCall,       // calls become kCall values (torch._utils._rebuild_tensor_v2)
  kValue,      // a value only, never called (torch.FloatStorage inside a persistent id)
};
using GlobalAllowList = std::map<std::string, GlobalUse, std::less<>>;  // "module name" -> use

struct Unpickled {
  std::vector<PickleValue> values;
  uint32_t root = 0;
  const PickleValue& at(uint32_t i) const { return values[i]; }
  // For kDict `dict`: the value stored under string key `key`, or nullptr.
  const PickleValue* Lookup(const PickleValue& dict, std::string_view key) const;
};

// `where` names the pickle in errors (the checkpoint and its entry).
Result<Unpickled> Unpickle(std::string_view bytes, const GlobalAllowList& allowed, const std::string& where);

}  // namespace visalign::clip
