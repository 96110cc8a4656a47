#include "clip/torch_checkpoint.h"

#include <sys/mman.h>

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <limits>
#include <set>

#include "clip/pickle.h"
#include "clip/zip_archive.h"
#include "visalign/core/untrusted.h"

namespace visalign::clip {
namespace {

constexpr std::string_view kRebuildTensor = "torch._utils _rebuild_tensor_v2";
constexpr std::string_view kRebuildParameter = "torch._utils _rebuild_parameter";
constexpr std::string_view kStateDictKey = "state_dict";
constexpr std::string_view kDataParallelPrefix = "module.";
constexpr uint8_t kPickleProto = 0x80;
constexpr size_t kSafetensorsHeaderStart = 8;  // after the u64 header length
// A tensor's elements: far above any checkpoint (ViT-bigG's largest is ~2^27), far below overflow.
constexpr uint64_t kMaxElements = uint64_t{1} << 40;

struct StorageType {
  std::string_view name;  // the global, "torch FloatStorage"
  DType dtype;
};
constexpr std::array<StorageType, 10> kStorageTypes{{
    {"torch FloatStorage", DType::kF32},
    {"torch HalfStorage", DType::kF16},
    {"torch BFloat16Storage", DType::kBF16},
    {"torch DoubleStorage", DType::kF64},
    {"torch LongStorage", DType::kI64},
    {"torch IntStorage", DType::kI32},
    {"torch ShortStorage", DType::kI16},
    {"torch CharStorage", DType::kI8},
    {"torch ByteStorage", DType::kU8},
    {"torch BoolStorage", DType::kBool},
}};

const GlobalAllowList& StateDictGlobals() {
  static const GlobalAllowList kGlobals = [] {
    GlobalAllowList g = {{"collections OrderedDict", GlobalUse::kEmptyDict},
                         {std::string(kRebuildTensor), GlobalUse::kCall},
                         {std::string(kRebuildParameter), GlobalUse::kCall}};
    for (const StorageType& s : kStorageTypes) g.emplace(std::string(s.name), GlobalUse::kValue);
    return g;
  }();
  return kGlobals;
}

class TensorReader {
 public:
  TensorReader(const Unpickled& pickle, const ZipArchive& zip, std::string prefix, const std::string& where)
      : p_(pickle), zip_(zip), prefix_(std::move(prefix)), where_(where) {}

  // The tensor a state dict value describes (a _rebuild_tensor_v2 call, or a _rebuild_parameter of one).
  Result<TensorInfo> Read(const std::string& name, const PickleValue& value, std::vector<std::vector<uint8_t>>& owned) {
    const PickleValue* v = &value;
    if (IsCall(*v, kRebuildParameter)) {
      const PickleValue& args = p_.at(v->items[1]);
      if (args.items.empty()) return Bad(name, "a _rebuild_parameter call without arguments");
      v = &p_.at(args.items[0]);
    }
    if (!IsCall(*v, kRebuildTensor)) {
      return Status::Unsupported(fmt::format("state dict entry {} is not a tensor", QuoteText(name)), where_,
                                 "tensors rebuilt by torch._utils._rebuild_tensor_v2 (a plain state dict)");
    }
    const PickleValue& args = p_.at(v->items[1]);
    if (args.items.size() < 4) return Bad(name, "_rebuild_tensor_v2 with fewer than 4 arguments");
    VISALIGN_ASSIGN_OR_RETURN(Storage storage, ReadStorage(name, p_.at(args.items[0])));
    const PickleValue& offset = p_.at(args.items[1]);
    if (offset.kind != PickleKind::kInt || offset.integer < 0) return Bad(name, "a storage offset that is not a count");
    VISALIGN_ASSIGN_OR_RETURN(std::vector<int64_t> shape, Ints(name, p_.at(args.items[2]), "size"));
    VISALIGN_ASSIGN_OR_RETURN(std::vector<int64_t> stride, Ints(name, p_.at(args.items[3]), "stride"));
    if (shape.size() != stride.size()) return Bad(name, "size and stride of different lengths");
    TensorInfo t;
    t.name = name;
    t.dtype = storage.dtype;
    t.shape = shape;
    const size_t element = DTypeSize(storage.dtype);
    uint64_t count = 1;
    bool contiguous = true;
    uint64_t expected_stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      const auto extent = static_cast<uint64_t>(shape[d]);
      if (extent > kMaxElements || (count > 0 && extent > kMaxElements / count)) return Bad(name, "too many elements");
      count *= extent;
      if (extent > 1 && static_cast<uint64_t>(stride[d]) != expected_stride) contiguous = false;
      expected_stride *= extent;
    }
    // The view must lie inside its storage: offset + sum((size_d - 1) * stride_d) < numel, computed
    // without overflow (each term is checked against the room left).
    const auto first = static_cast<uint64_t>(offset.integer);
    if (first > storage.elements || (count > 0 && first == storage.elements)) {
      return Bad(name, fmt::format("storage offset {} outside a {}-element storage", first, storage.elements));
    }
    uint64_t last = first;
    for (size_t d = 0; count > 0 && d < shape.size(); ++d) {
      const auto steps = static_cast<uint64_t>(shape[d] - 1);
      const auto step = static_cast<uint64_t>(stride[d]);
      if (steps == 0 || step == 0) continue;
      if (steps > (storage.elements - 1 - last) / step) {
        return Bad(name, fmt::format("a view of shape {} reaching past its {}-element storage", t.ShapeString(),
                                     storage.elements));
      }
      last += steps * step;
    }
    t.nbytes = count * element;
    const uint8_t* base = storage.data + first * element;
    if (contiguous || count == 0) {
      t.data = base;
      return t;
    }
    owned.emplace_back(t.nbytes);
    Gather(base, shape, stride, element, owned.back().data());
    t.data = owned.back().data();
    return t;
  }

 private:
  struct Storage {
    DType dtype = DType::kF32;
    const uint8_t* data = nullptr;
    uint64_t elements = 0;
  };

  Status Bad(const std::string& name, const std::string& what) const {
    return Status::Corrupt(fmt::format("tensor {}: {}", QuoteText(name), what), where_,
                           "a state dict as torch.save writes it");
  }
  bool IsCall(const PickleValue& v, std::string_view callable) const {
    return v.kind == PickleKind::kCall && p_.at(v.items[0]).text == callable;
  }

  Result<std::vector<int64_t>> Ints(const std::string& name, const PickleValue& tuple, const char* what) const {
    if (tuple.kind != PickleKind::kTuple) return Bad(name, fmt::format("a {} that is not a tuple", what));
    std::vector<int64_t> out;
    for (uint32_t i : tuple.items) {
      const PickleValue& v = p_.at(i);
      if (v.kind != PickleKind::kInt || v.integer < 0)
        return Bad(name, fmt::format("a {} with a negative or non-integer entry", what));
      out.push_back(v.integer);
    }
    return out;
  }

  // A persistent id ("storage", torch.<T>Storage, key, location, numel) and the bytes of data/<key>.
  Result<Storage> ReadStorage(const std::string& name, const PickleValue& pid_value) const {
    if (pid_value.kind != PickleKind::kPersistentId) return Bad(name, "a storage that is not a persistent id");
    const PickleValue& pid = p_.at(pid_value.items[0]);
    if (pid.kind != PickleKind::kTuple || pid.items.size() != 5 || p_.at(pid.items[0]).text != "storage") {
      return Bad(name, "a persistent id other than (\"storage\", type, key, location, numel)");
    }
    const PickleValue& type = p_.at(pid.items[1]);
    const PickleValue& key = p_.at(pid.items[2]);
    const PickleValue& numel = p_.at(pid.items[4]);
    Storage s;
    const StorageType* found = nullptr;
    for (const StorageType& st : kStorageTypes) {
      if (type.kind == PickleKind::kGlobal && type.text == st.name) found = &st;
    }
    if (found == nullptr) return Bad(name, "a storage without a torch.*Storage type");
    if (key.kind != PickleKind::kString || numel.kind != PickleKind::kInt || numel.integer < 0) {
      return Bad(name, "a storage key that is not a string or a size that is not a count");
    }
    s.dtype = found->dtype;
    const ZipEntry* entry = zip_.Find(prefix_ + "data/" + key.text);
    if (entry == nullptr)
      return Bad(name, fmt::format("storage {} has no data/{} entry", QuoteText(key.text), QuoteText(key.text)));
    const size_t element = DTypeSize(s.dtype);
    if (entry->size / element < static_cast<uint64_t>(numel.integer)) {
      return Bad(name, fmt::format("storage {} has {} bytes for {} elements of {} bytes", QuoteText(key.text),
                                   entry->size, numel.integer, element));
    }
    s.data = entry->data;
    s.elements = static_cast<uint64_t>(numel.integer);
    return s;
  }

  // Copies a strided view (at least one dimension, no zero extent) into row-major order: an
  // odometer over the indices, no recursion.
  static void Gather(const uint8_t* base, const std::vector<int64_t>& shape, const std::vector<int64_t>& stride,
                     size_t element, uint8_t* out) {
    std::vector<int64_t> index(shape.size(), 0);
    uint64_t source = 0;
    while (true) {
      std::memcpy(out, base + source * element, element);
      out += element;
      size_t d = shape.size();
      while (true) {
        if (d == 0) return;
        --d;
        source += static_cast<uint64_t>(stride[d]);
        if (++index[d] < shape[d]) break;
        source -= static_cast<uint64_t>(stride[d]) * static_cast<uint64_t>(shape[d]);
        index[d] = 0;
      }
    }
  }

  const Unpickled& p_;
  const ZipArchive& zip_;
  std::string prefix_;
  const std::string& where_;
};

// The archive's top folder ("<stem>/"), from its one */data.pkl entry.
Result<std::string> PickleEntryPrefix(const ZipArchive& zip, const std::string& where) {
  std::string prefix;
  int found = 0;
  for (const ZipEntry& e : zip.entries()) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.compare(slash + 1, std::string::npos, "data.pkl") == 0) {
      prefix = e.name.substr(0, slash + 1);
      ++found;
    }
  }
  if (found != 1) {
    return Status::Corrupt(fmt::format("{} <stem>/data.pkl entries in the zip archive", found), where,
                           "a PyTorch checkpoint (torch.save's zip format has exactly one)");
  }
  return prefix;
}

struct CheckpointTensors {
  std::vector<TensorInfo> tensors;
  std::vector<std::vector<uint8_t>> owned;
};

Result<CheckpointTensors> ReadTensors(const uint8_t* bytes, size_t size, const std::string& where) {
  VISALIGN_ASSIGN_OR_RETURN(ZipArchive zip, ZipArchive::Read(bytes, size, where));
  VISALIGN_ASSIGN_OR_RETURN(std::string prefix, PickleEntryPrefix(zip, where));
  const ZipEntry* pkl = zip.Find(prefix + "data.pkl");
  const std::string pickle_where = where + " " + prefix + "data.pkl";
  VISALIGN_ASSIGN_OR_RETURN(Unpickled pickle,
                            Unpickle(std::string_view(reinterpret_cast<const char*>(pkl->data), pkl->size),
                                     StateDictGlobals(), pickle_where));
  const PickleValue* dict = &pickle.at(pickle.root);
  if (dict->kind != PickleKind::kDict) {
    return Status::Unsupported("the checkpoint's object is not a dict", pickle_where,
                               "a state dict or a training checkpoint with a \"state_dict\"");
  }
  bool training = false;
  if (const PickleValue* inner = pickle.Lookup(*dict, kStateDictKey);
      inner != nullptr && inner->kind == PickleKind::kDict) {
    dict = inner;
    training = true;
  }
  CheckpointTensors out;
  std::set<std::string> names;
  TensorReader reader(pickle, zip, prefix, pickle_where);
  for (size_t i = 0; i + 1 < dict->items.size(); i += 2) {
    const PickleValue& key = pickle.at(dict->items[i]);
    if (key.kind != PickleKind::kString) {
      return Status::Corrupt("a state dict key that is not a string", pickle_where, "tensor names as keys");
    }
    std::string name = key.text;
    if (training && name.starts_with(kDataParallelPrefix)) name.erase(0, kDataParallelPrefix.size());
    if (!names.insert(name).second) {
      return Status::Corrupt(fmt::format("tensor {} appears twice", QuoteText(name)), pickle_where,
                             "unique tensor names");
    }
    VISALIGN_ASSIGN_OR_RETURN(TensorInfo t, reader.Read(name, pickle.at(dict->items[i + 1]), out.owned));
    out.tensors.push_back(std::move(t));
  }
  return out;
}

}  // namespace

Result<SafetensorsFile> ReadTorchCheckpoint(const uint8_t* bytes, size_t size, const std::string& where) {
  VISALIGN_ASSIGN_OR_RETURN(CheckpointTensors t, ReadTensors(bytes, size, where));
  return SafetensorsFile::Adopt(where, FileMapping{}, std::move(t.tensors), std::move(t.owned));
}

Result<SafetensorsFile> OpenTorchCheckpoint(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(FileMapping mapping, MapFileReadOnly(path, "PyTorch checkpoint"));
  Result<CheckpointTensors> t = ReadTensors(static_cast<const uint8_t*>(mapping.data), mapping.size, path.string());
  if (!t.ok()) {
    munmap(mapping.data, mapping.size);
    return t.status();
  }
  return SafetensorsFile::Adopt(path, mapping, std::move(t->tensors), std::move(t->owned));
}

Result<SafetensorsFile> OpenWeightsFile(const std::filesystem::path& path) {
  VISALIGN_ASSIGN_OR_RETURN(FileMapping mapping, MapFileReadOnly(path, "weights"));
  const auto* bytes = static_cast<const uint8_t*>(mapping.data);
  const bool zip = LooksLikeZip(bytes, mapping.size);
  // A safetensors file starts with its header's length (u64 little-endian) and the header's '{'; its
  // first byte may be 0x80 (coca-tiny's header is 0x2c80 bytes long), so only a file without that '{'
  // is taken for a bare pickle (legacy torch.save: PROTO 2, then the LONG1 magic number).
  const bool safetensors = mapping.size > kSafetensorsHeaderStart && bytes[kSafetensorsHeaderStart] == '{';
  const bool legacy = bytes[0] == kPickleProto && !safetensors;
  munmap(mapping.data, mapping.size);
  if (zip) return OpenTorchCheckpoint(path);
  if (legacy) {
    return Status::Unsupported("legacy PyTorch serialization (torch < 1.6, a bare pickle, not a zip archive)",
                               path.string(), "torch.save's zip format (re-save with torch >= 1.6) or safetensors");
  }
  return SafetensorsFile::Open(path);
}

}  // namespace visalign::clip
