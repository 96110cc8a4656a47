#include "clip/pickle.h"

#include <fmt/format.h>

#include <cstring>
#include <unordered_map>

#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

// The opcodes this unpickler knows (pickletools' names).
enum Opcode : uint8_t {
  kMark = '(',
  kStop = '.',
  kPop = '0',
  kPopMark = '1',
  kBinBytes = 'B',
  kShortBinBytes = 'C',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNone = 'N',
  kBinPersId = 'Q',
  kReduce = 'R',
  kBinUnicode = 'X',
  kEmptyList = ']',
  kAppend = 'a',
  kBuild = 'b',
  kGlobal = 'c',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kStackGlobal = 0x93,
  kMemoize = 0x94,
  kFrame = 0x95,
};
constexpr int kHighestProtocol = 5;
constexpr size_t kMaxLong1Bytes = 8;
constexpr size_t kMaxGlobalNameBytes = 256;

PickleValue Of(PickleKind kind) {
  PickleValue v;
  v.kind = kind;
  return v;
}

class Machine {
 public:
  Machine(std::string_view bytes, const GlobalAllowList& allowed, const std::string& where)
      : bytes_(bytes), allowed_(allowed), where_(where) {}

  Result<Unpickled> Run() {
    while (true) {
      if (pos_ >= bytes_.size()) return Bad("the pickle ends without a STOP opcode");
      const size_t at = pos_;
      const auto op = static_cast<uint8_t>(bytes_[pos_++]);
      if (op == kStop) {
        VISALIGN_ASSIGN_OR_RETURN(uint32_t root, Pop(at));
        Unpickled out;
        out.values = std::move(values_);
        out.root = root;
        return out;
      }
      VISALIGN_RETURN_IF_ERROR(Step(op, at));
    }
  }

 private:
  Status Bad(const std::string& what) const {
    return Status::Corrupt(what, where_, "a pickle as torch.save writes it (truncated or damaged?)");
  }

  Result<std::string_view> Take(size_t n) {
    if (n > bytes_.size() - pos_) return Bad(fmt::format("an opcode's argument of {} bytes runs past the end", n));
    const std::string_view s = bytes_.substr(pos_, n);
    pos_ += n;
    return s;
  }
  template <typename T>
  Result<T> TakeLittleEndian() {
    VISALIGN_ASSIGN_OR_RETURN(std::string_view s, Take(sizeof(T)));
    T v;
    std::memcpy(&v, s.data(), sizeof(T));
    return v;
  }
  Result<std::string_view> TakeLine() {
    const size_t end = bytes_.find('\n', pos_);
    if (end == std::string_view::npos || end - pos_ > kMaxGlobalNameBytes)
      return Bad("a GLOBAL name without its newline");
    const std::string_view s = bytes_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }

  uint32_t New(PickleValue v) {
    values_.push_back(std::move(v));
    return static_cast<uint32_t>(values_.size() - 1);
  }
  void Push(PickleValue v) { stack_.push_back(New(std::move(v))); }
  Result<uint32_t> Pop(size_t at) {
    if (stack_.size() <= Floor()) return Bad(fmt::format("opcode at byte {} pops an empty stack", at));
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  size_t Floor() const { return marks_.empty() ? 0 : marks_.back(); }
  // The items above the topmost mark, removing them and the mark.
  Result<std::vector<uint32_t>> PopToMark(size_t at) {
    if (marks_.empty()) return Bad(fmt::format("opcode at byte {} needs a MARK", at));
    const size_t mark = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(mark), stack_.end());
    stack_.resize(mark);
    return items;
  }
  Result<PickleValue*> Top(PickleKind kind, const char* what, size_t at) {
    if (stack_.size() <= Floor() || values_[stack_.back()].kind != kind) {
      return Bad(fmt::format("opcode at byte {} needs a {} on the stack", at, what));
    }
    return &values_[stack_.back()];
  }
  Status TupleOf(size_t count, size_t at) {
    if (stack_.size() < Floor() + count) return Bad(fmt::format("opcode at byte {} pops an empty stack", at));
    PickleValue t = Of(PickleKind::kTuple);
    t.items.assign(stack_.end() - static_cast<std::ptrdiff_t>(count), stack_.end());
    stack_.resize(stack_.size() - count);
    Push(std::move(t));
    return Status::Ok();
  }
  Status Memo(uint32_t index) {
    if (stack_.size() <= Floor()) return Bad("memo store from an empty stack");
    memo_[index] = stack_.back();
    return Status::Ok();
  }
  Status Recall(uint32_t index, size_t at) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) return Bad(fmt::format("opcode at byte {} reads memo entry {}, never stored", at, index));
    stack_.push_back(it->second);
    return Status::Ok();
  }
  Status Global(std::string name) {
    if (allowed_.find(name) == allowed_.end()) {
      return Status::InvalidArgument(fmt::format("pickle global {} is not allowed", QuoteText(name)), where_,
                                     "only the globals a PyTorch state dict uses (collections.OrderedDict, "
                                     "torch._utils._rebuild_tensor_v2, torch._utils._rebuild_parameter, "
                                     "torch.*Storage); nothing was executed");
    }
    PickleValue g = Of(PickleKind::kGlobal);
    g.text = std::move(name);
    Push(std::move(g));
    return Status::Ok();
  }
  Status Reduce(size_t at) {
    VISALIGN_ASSIGN_OR_RETURN(uint32_t args, Pop(at));
    VISALIGN_ASSIGN_OR_RETURN(uint32_t callable, Pop(at));
    const PickleValue& c = values_[callable];
    if (c.kind != PickleKind::kGlobal || values_[args].kind != PickleKind::kTuple) {
      return Bad(fmt::format("REDUCE at byte {} calls something other than a global with a tuple", at));
    }
    const GlobalUse use = allowed_.find(c.text)->second;
    if (use == GlobalUse::kValue) {
      return Status::InvalidArgument(fmt::format("pickle calls {}", QuoteText(c.text)), where_,
                                     "a state dict, which never calls a storage type; nothing was executed");
    }
    if (use == GlobalUse::kEmptyDict) {
      if (!values_[args].items.empty()) return Bad(fmt::format("{} called with arguments", QuoteText(c.text)));
      Push(Of(PickleKind::kDict));
      return Status::Ok();
    }
    PickleValue call = Of(PickleKind::kCall);
    call.items = {callable, args};
    Push(std::move(call));
    return Status::Ok();
  }
  Status SetItems(std::vector<uint32_t> items, size_t at) {
    if (items.size() % 2 != 0) return Bad(fmt::format("SETITEMS at byte {} has a key without a value", at));
    VISALIGN_ASSIGN_OR_RETURN(PickleValue * dict, Top(PickleKind::kDict, "dict", at));
    dict->items.insert(dict->items.end(), items.begin(), items.end());
    return Status::Ok();
  }
  Status Text(PickleKind kind, size_t n) {
    VISALIGN_ASSIGN_OR_RETURN(std::string_view s, Take(n));
    PickleValue v = Of(kind);
    v.text = std::string(s);
    Push(std::move(v));
    return Status::Ok();
  }
  void Int(int64_t i) {
    PickleValue v = Of(PickleKind::kInt);
    v.integer = i;
    Push(std::move(v));
  }
  void Bool(bool b) {
    PickleValue v = Of(PickleKind::kBool);
    v.integer = b ? 1 : 0;
    Push(std::move(v));
  }

  Status Step(uint8_t op, size_t at);

  std::string_view bytes_;
  const GlobalAllowList& allowed_;
  const std::string& where_;
  size_t pos_ = 0;
  std::vector<PickleValue> values_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint32_t, uint32_t> memo_;
};

Status Machine::Step(uint8_t op, size_t at) {
  switch (op) {
    case kProto: {
      VISALIGN_ASSIGN_OR_RETURN(auto version, TakeLittleEndian<uint8_t>());
      if (version > kHighestProtocol) return Bad(fmt::format("pickle protocol {}", version));
      return Status::Ok();
    }
    case kFrame:
      return TakeLittleEndian<uint64_t>().status();
    case kMark:
      marks_.push_back(stack_.size());
      return Status::Ok();
    case kPop:
      return Pop(at).status();
    case kPopMark:
      return PopToMark(at).status();
    case kEmptyTuple:
      Push(Of(PickleKind::kTuple));
      return Status::Ok();
    case kTuple1:
    case kTuple2:
    case kTuple3:
      return TupleOf(op - kTuple1 + 1, at);
    case kTuple: {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopToMark(at));
      PickleValue t = Of(PickleKind::kTuple);
      t.items = std::move(items);
      Push(std::move(t));
      return Status::Ok();
    }
    case kEmptyList:
      Push(Of(PickleKind::kList));
      return Status::Ok();
    case kEmptyDict:
      Push(Of(PickleKind::kDict));
      return Status::Ok();
    case kAppend: {
      VISALIGN_ASSIGN_OR_RETURN(uint32_t item, Pop(at));
      VISALIGN_ASSIGN_OR_RETURN(PickleValue * list, Top(PickleKind::kList, "list", at));
      list->items.push_back(item);
      return Status::Ok();
    }
    case kAppends: {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopToMark(at));
      VISALIGN_ASSIGN_OR_RETURN(PickleValue * list, Top(PickleKind::kList, "list", at));
      list->items.insert(list->items.end(), items.begin(), items.end());
      return Status::Ok();
    }
    case kSetItem: {
      VISALIGN_ASSIGN_OR_RETURN(uint32_t value, Pop(at));
      VISALIGN_ASSIGN_OR_RETURN(uint32_t key, Pop(at));
      return SetItems({key, value}, at);
    }
    case kSetItems: {
      VISALIGN_ASSIGN_OR_RETURN(std::vector<uint32_t> items, PopToMark(at));
      return SetItems(std::move(items), at);
    }
    case kBuild: {  // a dict's instance state (OrderedDict._metadata of a state dict): ignored
      VISALIGN_ASSIGN_OR_RETURN(uint32_t state, Pop(at));
      if (values_[state].kind != PickleKind::kDict && values_[state].kind != PickleKind::kNone) {
        return Bad(fmt::format("BUILD at byte {} with a state other than a dict", at));
      }
      return Top(PickleKind::kDict, "dict", at).status();
    }
    case kBinPut: {
      VISALIGN_ASSIGN_OR_RETURN(auto index, TakeLittleEndian<uint8_t>());
      return Memo(index);
    }
    case kLongBinPut: {
      VISALIGN_ASSIGN_OR_RETURN(auto index, TakeLittleEndian<uint32_t>());
      return Memo(index);
    }
    case kMemoize:
      return Memo(static_cast<uint32_t>(memo_.size()));
    case kBinGet: {
      VISALIGN_ASSIGN_OR_RETURN(auto index, TakeLittleEndian<uint8_t>());
      return Recall(index, at);
    }
    case kLongBinGet: {
      VISALIGN_ASSIGN_OR_RETURN(auto index, TakeLittleEndian<uint32_t>());
      return Recall(index, at);
    }
    case kGlobal: {
      VISALIGN_ASSIGN_OR_RETURN(std::string_view module, TakeLine());
      VISALIGN_ASSIGN_OR_RETURN(std::string_view name, TakeLine());
      return Global(fmt::format("{} {}", module, name));
    }
    case kStackGlobal: {
      VISALIGN_ASSIGN_OR_RETURN(uint32_t name, Pop(at));
      VISALIGN_ASSIGN_OR_RETURN(uint32_t module, Pop(at));
      if (values_[name].kind != PickleKind::kString || values_[module].kind != PickleKind::kString) {
        return Bad(fmt::format("STACK_GLOBAL at byte {} without two strings", at));
      }
      return Global(values_[module].text + " " + values_[name].text);
    }
    case kReduce:
      return Reduce(at);
    case kBinPersId: {
      VISALIGN_ASSIGN_OR_RETURN(uint32_t id, Pop(at));
      PickleValue p = Of(PickleKind::kPersistentId);
      p.items = {id};
      Push(std::move(p));
      return Status::Ok();
    }
    case kBinInt: {
      VISALIGN_ASSIGN_OR_RETURN(auto v, TakeLittleEndian<int32_t>());
      Int(v);
      return Status::Ok();
    }
    case kBinInt1: {
      VISALIGN_ASSIGN_OR_RETURN(auto v, TakeLittleEndian<uint8_t>());
      Int(v);
      return Status::Ok();
    }
    case kBinInt2: {
      VISALIGN_ASSIGN_OR_RETURN(auto v, TakeLittleEndian<uint16_t>());
      Int(v);
      return Status::Ok();
    }
    case kLong1: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint8_t>());
      if (n > kMaxLong1Bytes) return Bad(fmt::format("an integer of {} bytes at byte {} (at most 8)", n, at));
      VISALIGN_ASSIGN_OR_RETURN(std::string_view s, Take(n));
      uint64_t u = 0;
      for (size_t i = 0; i < n; ++i) u |= static_cast<uint64_t>(static_cast<uint8_t>(s[i])) << (8 * i);
      if (n > 0 && n < kMaxLong1Bytes && (static_cast<uint8_t>(s[n - 1]) & 0x80) != 0) u |= ~uint64_t{0} << (8 * n);
      Int(static_cast<int64_t>(u));
      return Status::Ok();
    }
    case kNone:
      Push(Of(PickleKind::kNone));
      return Status::Ok();
    case kNewTrue:
    case kNewFalse:
      Bool(op == kNewTrue);
      return Status::Ok();
    case kBinFloat: {  // big-endian IEEE double
      VISALIGN_ASSIGN_OR_RETURN(std::string_view s, Take(sizeof(double)));
      uint64_t bits = 0;
      for (char c : s) bits = (bits << 8) | static_cast<uint8_t>(c);
      PickleValue v = Of(PickleKind::kFloat);
      std::memcpy(&v.real, &bits, sizeof(double));
      Push(std::move(v));
      return Status::Ok();
    }
    case kShortBinUnicode: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint8_t>());
      return Text(PickleKind::kString, n);
    }
    case kBinUnicode: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint32_t>());
      return Text(PickleKind::kString, n);
    }
    case kBinUnicode8: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint64_t>());
      return Text(PickleKind::kString, n);
    }
    case kShortBinBytes: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint8_t>());
      return Text(PickleKind::kBytes, n);
    }
    case kBinBytes: {
      VISALIGN_ASSIGN_OR_RETURN(auto n, TakeLittleEndian<uint32_t>());
      return Text(PickleKind::kBytes, n);
    }
    default:
      return Status::InvalidArgument(fmt::format("pickle opcode 0x{:02x} at byte {} is not allowed", op, at), where_,
                                     "only the opcodes a PyTorch state dict uses; nothing was executed");
  }
}

}  // namespace

const PickleValue* Unpickled::Lookup(const PickleValue& dict, std::string_view key) const {
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const PickleValue& k = values[dict.items[i]];
    if (k.kind == PickleKind::kString && k.text == key) return &values[dict.items[i + 1]];
  }
  return nullptr;
}

Result<Unpickled> Unpickle(std::string_view bytes, const GlobalAllowList& allowed, const std::string& where) {
  return Machine(bytes, allowed, where).Run();
}

}  // namespace visalign::clip
