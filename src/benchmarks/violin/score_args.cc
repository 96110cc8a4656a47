// The arguments of `visalign violin score`: its three target forms, and the two forms of a line
// of a --batch file (a JSON object of named arguments, or a JSON array of command-line ones).
#include <fmt/format.h>

#include <set>

#include "visalign/benchmarks/violin/evaluate.h"
#include "visalign/core/untrusted.h"

namespace visalign::violin {
namespace {

constexpr char kTargetForms[] =
    "exactly one of --target COLOR, --layout h2|v2|q4 --targets C1,C2[,C3,C4], --fuzzy LOW,HIGH";
constexpr char kLineForms[] =
    "a JSON object {\"image\": PATH, \"target\": COLOR, ...} or a JSON array of score arguments "
    "[PATH, \"--target\", COLOR, ...]";
// Where errors about the combination of target arguments point (a command line or a batch line).
constexpr char kTargetWhere[] = "target arguments";
constexpr char kMembers[] = "members image, target, layout, targets, fuzzy, weights (strings)";
constexpr char kOptions[] = "one image PATH and the options --target, --layout, --targets, --fuzzy, --weights";

Result<std::vector<color::Srgb8>> ColorsArgument(const std::string& text, const std::string& option) {
  Result<std::vector<color::Srgb8>> colors = color::ParseColorList(text);
  if (!colors.ok()) return colors.status().WithContext("argument " + option);
  return colors;
}

// The member of `args` that the option --`name` (or the object member `name`) sets; nullptr for
// an unknown name. "image" is the positional argument, so only objects name it.
std::string* ArgumentField(ScoreArgs& args, std::string_view name) {
  if (name == "target") return &args.target.target;
  if (name == "layout") return &args.target.layout;
  if (name == "targets") return &args.target.targets;
  if (name == "fuzzy") return &args.target.fuzzy;
  if (name == "weights") return &args.weights;
  return nullptr;
}

Status NoImage(const std::string& expected) { return Status::InvalidArgument("no image", "", expected); }

Result<ScoreArgs> FromObject(const Json& object) {
  ScoreArgs args;
  for (const auto& [name, value] : object.items()) {
    std::string* field = name == "image" ? &args.image : ArgumentField(args, name);
    if (field == nullptr) return Status::InvalidArgument("unknown member \"" + name + "\"", "", kMembers);
    if (!value.is_string())
      return Status::InvalidArgument(std::string("a ") + value.type_name() + " value", "member " + name,
                                     "a string, e.g. {\"image\": \"a.png\", \"target\": \"#FF0000\"}");
    *field = value.get<std::string>();
  }
  if (args.image.empty()) return NoImage("a member \"image\": PATH");
  return args;
}

Result<std::string> StringArgument(const Json& arguments, size_t i) {
  if (!arguments[i].is_string())
    return Status::InvalidArgument(std::string("a ") + arguments[i].type_name() + " argument",
                                   fmt::format("argument {}", i + 1), "strings, as on the command line");
  return arguments[i].get<std::string>();
}

Result<ScoreArgs> FromArguments(const Json& arguments) {
  ScoreArgs args;
  std::set<std::string> given;
  for (size_t i = 0; i < arguments.size(); ++i) {
    VISALIGN_ASSIGN_OR_RETURN(std::string argument, StringArgument(arguments, i));
    if (!argument.starts_with('-')) {
      if (!args.image.empty())
        return Status::InvalidArgument("more than one image (\"" + args.image + "\", \"" + argument + "\")", "",
                                       "one image per batch line");
      args.image = std::move(argument);
      continue;
    }
    const size_t equals = argument.find('=');
    const std::string option = argument.substr(0, equals);
    std::string* field = option.starts_with("--") ? ArgumentField(args, option.substr(2)) : nullptr;
    if (field == nullptr) return Status::InvalidArgument("unknown option \"" + option + "\"", "", kOptions);
    if (!given.insert(option).second)
      return Status::InvalidArgument(option + " given twice", "", "each option at most once per line");
    if (equals != std::string::npos) {
      *field = argument.substr(equals + 1);
    } else if (i + 1 < arguments.size()) {
      VISALIGN_ASSIGN_OR_RETURN(*field, StringArgument(arguments, ++i));
    } else {
      return Status::InvalidArgument(option + " without a value", "", option + " VALUE or " + option + "=VALUE");
    }
  }
  if (args.image.empty()) return NoImage(kOptions);
  return args;
}

}  // namespace

Result<TargetSpec> ParseTargetSpec(const TargetArgs& args) {
  const int forms = !args.target.empty() + !args.targets.empty() + !args.fuzzy.empty();
  if (forms != 1)
    return Status::InvalidArgument("no target or more than one target form given", kTargetWhere, kTargetForms);
  TargetSpec spec;
  if (!args.target.empty()) {
    VISALIGN_ASSIGN_OR_RETURN(spec.targets, ColorsArgument(args.target, "--target"));
    if (spec.targets.size() != 1)
      return Status::InvalidArgument("--target takes one color", "argument --target \"" + args.target + "\"",
                                     "use --layout with --targets for several blocks");
  } else if (!args.targets.empty()) {
    if (args.layout.empty()) return Status::InvalidArgument("--targets without --layout", kTargetWhere, kTargetForms);
    VISALIGN_ASSIGN_OR_RETURN(spec.layout, ParseLayout(args.layout));
    VISALIGN_ASSIGN_OR_RETURN(spec.targets, ColorsArgument(args.targets, "--targets"));
  } else {
    VISALIGN_ASSIGN_OR_RETURN(std::vector<color::Srgb8> range, ColorsArgument(args.fuzzy, "--fuzzy"));
    if (range.size() != 2)
      return Status::InvalidArgument(std::to_string(range.size()) + " colors",
                                     "argument --fuzzy \"" + args.fuzzy + "\"", "two colors LOW,HIGH");
    spec.fuzzy = std::make_pair(range[0], range[1]);
  }
  if (!args.layout.empty() && args.targets.empty())
    return Status::InvalidArgument("--layout without --targets", kTargetWhere, kTargetForms);
  VISALIGN_RETURN_IF_ERROR(spec.Validate());
  return spec;
}

Result<ScoreArgs> ParseScoreLine(std::string_view line) {
  auto document = ParseJson(line);
  if (!document.ok()) return Status::Corrupt(document.status().what(), "", kLineForms);
  const Json& parsed = *document;
  if (parsed.is_object()) return FromObject(parsed);
  if (parsed.is_array()) return FromArguments(parsed);
  return Status::InvalidArgument(std::string("a JSON ") + parsed.type_name() + " line", "", kLineForms);
}

Result<imaging::AlphaPolicy> ParseBackground(std::string_view text) {
  if (text == "none") return imaging::AlphaPolicy{imaging::AlphaPolicy::Mode::kDrop, {}};
  Result<color::ParsedColor> parsed = color::ParseColor(text);
  if (!parsed.ok())
    return Status::InvalidArgument("invalid background \"" + std::string(text) + "\"", "background",
                                   "a colour to composite transparent pixels over (e.g. #FFFFFF, white) or none");
  const color::Srgb8 c = parsed->rgb8;
  return imaging::AlphaPolicy{imaging::AlphaPolicy::Mode::kComposite, {c.r, c.g, c.b}};
}

std::string AlphaPolicyText(const imaging::AlphaPolicy& alpha) {
  if (alpha.mode == imaging::AlphaPolicy::Mode::kDrop) return "with alpha dropped (stored RGB)";
  return "composited over " + color::ToHex({alpha.background[0], alpha.background[1], alpha.background[2]});
}

}  // namespace visalign::violin
