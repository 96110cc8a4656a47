// visalign: thin command-line front end over libvisalign.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iostream>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/cli.h"
#include "visalign/core/parallel.h"
#include "visalign/core/progress.h"
#include "visalign/core/version.h"
#include "visalign/imaging/image.h"

namespace visalign::cli {

CLI::App* Cli::Group(const std::string& name, const std::string& description) {
  for (CLI::App* sub : app_.get_subcommands(nullptr))
    if (sub->get_name() == name) return sub;
  CLI::App* g = app_.add_subcommand(name, description);
  g->require_subcommand(1);
  return g;
}

namespace {
struct RegisteredGroup {
  int order;
  std::vector<std::string> commands;
  std::function<void(Cli&)> add;
};
std::vector<RegisteredGroup>& Registry() {
  static std::vector<RegisteredGroup> groups;
  return groups;
}
}  // namespace

CommandGroup::CommandGroup(int order, std::vector<std::string> commands, std::function<void(Cli&)> add) {
  Registry().push_back({order, std::move(commands), std::move(add)});
}

Status CommandGroup::Add(Cli& cli, const std::string& command) {
  std::vector<RegisteredGroup> groups = Registry();
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (const RegisteredGroup& group : groups) {
    const auto& named = group.commands;
    if (!command.empty() && std::find(named.begin(), named.end(), command) == named.end()) continue;
    std::vector<std::string> before;
    for (const CLI::App* sub : cli.app().get_subcommands(nullptr)) before.push_back(sub->get_name());
    group.add(cli);
    // A group that adds a top-level command it does not declare would lose it whenever only the
    // declared ones are built: refused here (every full build, e.g. `visalign --help`, checks).
    for (const CLI::App* sub : cli.app().get_subcommands(nullptr)) {
      const std::string& name = sub->get_name();
      if (std::find(before.begin(), before.end(), name) == before.end() &&
          std::find(named.begin(), named.end(), name) == named.end())
        return Status::Internal("the command group of order " + std::to_string(group.order) +
                                " adds the top-level command \"" + name + "\" without declaring it");
    }
  }
  return Status::Ok();
}

bool CommandGroup::Declared(const std::string& command) {
  return std::any_of(Registry().begin(), Registry().end(), [&](const RegisteredGroup& g) {
    return std::find(g.commands.begin(), g.commands.end(), command) != g.commands.end();
  });
}

void Cli::Bind(CLI::App* sub, std::function<Status()> fn) {
  sub->callback([this, fn = std::move(fn)] { action_ = fn; });
}

Status Cli::RunAction() { return action_ ? action_() : Status::Ok(); }

void Cli::DeprecateOption(CLI::App* cmd, std::string old_name, std::string new_name, std::string new_name_for_bare) {
  renamed_.push_back({cmd, std::move(old_name), std::move(new_name), std::move(new_name_for_bare)});
}

void Cli::DeprecateCommand(const CLI::App* old_cmd, std::string new_path) {
  renamed_commands_.emplace_back(old_cmd, std::move(new_path));
}

void Cli::AddRenamedCommand(CLI::App* group, const std::string& name, const std::string& old_name,
                            const std::string& description, const std::function<void(CLI::App*)>& add) {
  add(group->add_subcommand(name, description));
  CLI::App* old = app_.add_subcommand(old_name, description);
  old->group("");  // hidden from --help
  add(old);
  DeprecateCommand(old, app_.get_name() + " " + group->get_name() + " " + name);
}

namespace {
// Global options that take a value (skipped when looking for a command name in argv).
bool TakesValue(std::string_view option) {
  return option == "--threads" || option == "--log-level" || option == "--max-image-pixels";
}

// What argv asks of the command list: the top-level command it names (its first word that is
// neither an option nor a global option's value, if a group declares it), whether --help/-h
// comes before it, and whether it only asks for --version.
struct NamedCommand {
  std::string command;
  bool help_first = false, version_only = false;
};
NamedCommand FindNamedCommand(int argc, char** argv) {
  NamedCommand out;
  bool version = false, other_word = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (TakesValue(arg)) {
      ++i;
      continue;
    }
    if (arg == "--help" || arg == "-h" || arg == "--help-all") out.help_first = true;
    if (arg == "--version") version = true;
    if (arg.empty() || arg[0] == '-') continue;
    if (CommandGroup::Declared(std::string(arg)))
      out.command = arg;
    else
      other_word = true;
    break;
  }
  out.version_only = version && out.command.empty() && !out.help_first && !other_word;
  return out;
}
}  // namespace

std::vector<std::string> Cli::RewriteDeprecated(int argc, char** argv) const {
  std::vector<std::string> args(argv, argv + argc);
  // The selected command: leading words that name subcommands, global options skipped.
  const CLI::App* cmd = &app_;
  std::string path = app_.get_name();
  size_t options_from = 1;  // the first argument after the command's name: where its options start
  for (size_t i = 1; i < args.size(); ++i) {
    if (TakesValue(args[i])) {
      ++i;
      continue;
    }
    if (args[i].empty() || args[i][0] == '-') continue;
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : cmd->get_subcommands(nullptr))
      if (s->check_name(args[i])) sub = s;
    if (!sub) break;
    cmd = sub;
    path += " " + args[i];
    options_from = i + 1;
  }
  for (const auto& [old_cmd, new_path] : renamed_commands_)
    if (old_cmd == cmd)
      std::fprintf(stderr, "warning: `%s` is deprecated: use `%s` (the old name goes in the next release)\n",
                   path.c_str(), new_path.c_str());
  for (size_t j = options_from; j < args.size(); ++j)
    for (const Renamed& r : renamed_) {
      if (r.cmd != cmd) continue;
      const bool inline_value = args[j].rfind(r.old_name + "=", 0) == 0;
      if (args[j] != r.old_name && !inline_value) continue;
      const std::string value =
          inline_value ? args[j].substr(r.old_name.size() + 1) : (j + 1 < args.size() ? args[j + 1] : std::string());
      const std::string& replacement =
          !r.new_name_for_bare.empty() && value.find('=') == std::string::npos ? r.new_name_for_bare : r.new_name;
      std::fprintf(stderr, "warning: %s is deprecated for `%s`: use %s (the old spelling goes in the next release)\n",
                   r.old_name.c_str(), path.c_str(), replacement.c_str());
      args[j] = inline_value ? replacement + "=" + value : replacement;
    }
  return args;
}

void PrintJson(const Json& j) { std::cout << j.dump(2) << std::endl; }

Json FloatJson(float v) { return std::stod(fmt::format("{}", v)); }

namespace {

// "visalign violin score": the commands the parser had entered when it failed.
std::vector<const CLI::App*> CommandPath(const CLI::App& app) {
  std::vector<const CLI::App*> path = {&app};
  for (;;) {
    const auto subs = path.back()->get_subcommands();
    if (subs.empty()) return path;
    path.push_back(subs.front());
  }
}

std::string PathText(const std::vector<const CLI::App*>& path) {
  std::string out;
  for (const CLI::App* a : path) out += (out.empty() ? "" : " ") + a->get_name();
  return out;
}

// CLI11's range text for its "at least 0" and "positive" checks spells out DBL_MAX (309 digits):
// say what is wrong with the value instead. Only those two checks have an unbounded top, and a
// value of 0 can only fail the positive one.
std::string ReadableRanges(std::string text) {
  static const std::regex kUnbounded(R"(Value (\S*) not in range [-0-9.e+]+ to [0-9]{100,}\.?[0-9]*)");
  std::smatch m;
  if (!std::regex_search(text, m, kUnbounded)) return text;
  const std::string value = m[1].str();
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  const bool number = !value.empty() && end == value.c_str() + value.size();
  const std::string why = !number ? "value \"" + value + "\" is not a number"
                          : v < 0 ? "value " + value + " is negative: expected 0 or more"
                                  : "value " + value + " is not positive: expected a number above 0";
  return m.prefix().str() + why + m.suffix().str();
}

// A CLI11 parse error as visalign's one line `what (where): expected`, naming the command and,
// for a group, an unknown or missing command with the ones it has.
Status ParseErrorStatus(const CLI::ParseError& e, const CLI::App& app, int argc, char** argv) {
  const std::vector<const CLI::App*> path = CommandPath(app);
  const CLI::App& last = *path.back();
  const std::string where = PathText(path);
  const std::string help = "see `" + where + " --help`";
  const auto subs = last.get_subcommands(nullptr);
  if (!subs.empty() && last.get_subcommands().empty()) {
    std::string names;
    for (const CLI::App* s : subs) names += (names.empty() ? "" : ", ") + s->get_name();
    // The first word after the group's name (the program's, for the top level) that is neither an
    // option nor an option's value is the command asked for.
    int i = 1;
    if (path.size() > 1)
      while (i < argc && argv[i] != last.get_name()) ++i;
    for (i += path.size() > 1 ? 1 : 0; i < argc; ++i) {
      if (TakesValue(argv[i])) {
        ++i;
        continue;
      }
      if (argv[i][0] != '-')
        return Status::InvalidArgument("unknown command \"" + std::string(argv[i]) + "\"", where, "one of " + names);
    }
    return Status::InvalidArgument("missing command", where, "one of " + names);
  }
  // An option no command on the path knows is the likeliest cause even when CLI11 first found a
  // required argument missing (it checks those before leftovers): name it.
  for (int i = 1; i < argc; ++i) {
    const std::string token = argv[i];
    if (token.size() < 2 || token[0] != '-' || token == "--") continue;
    const std::string name = token.substr(0, token.find('='));
    const bool known = std::any_of(path.begin(), path.end(), [&](const CLI::App* a) {
      return a->get_option_no_throw(name) != nullptr || name == "--help" || name == "-h";
    });
    const bool negative_number =
        token.size() > 1 && (std::isdigit(static_cast<unsigned char>(token[1])) || token[1] == '.');
    if (!known && !negative_number) return Status::InvalidArgument("unknown option " + name, where, help);
  }
  std::string what = ReadableRanges(e.what());
  static const std::regex kNotExpected(R"(^The following arguments? (was|were) not expected: (.*)$)");
  std::smatch m;
  if (std::regex_match(what, m, kNotExpected)) what = "unknown option or extra argument " + m[2].str();
  return Status::InvalidArgument(what, where, help);
}

// Library errors name the library's inputs ("run name"); on the command line those inputs are
// flags. One table serves every command because every command spells an input the same way
// (docs/cli.md). A `where` that is an input name, or starts with one and a space, is renamed.
constexpr std::pair<std::string_view, std::string_view> kFlagOfInput[] = {
    {"run name", "--run"},
    {"model name", "--clip-model"},
    {"results folder", "--results"},
    {"families file", "--families"},
    {"board word", "--board-word"},
    {"store location", "--store"},
    {"store password variable", "--store-password-env"},
    {"image root", "--image-root"},
    {"image folder", "--images"},
    {"output folder", "--out"},
    {"import folder", "--path"},
    {"API key variable", "--api-key-env"},
    {"judge API key variable", "--judge-api-key-env"},
    {"judge model", "--judge-model"},
    {"judge endpoint", "--judge-endpoint"},
    {"command template", "--cmd"},
    {"command timeout", "--timeout"},
    {"concurrency", "--concurrency"},
    {"max attempts", "--max-attempts"},
    {"concept set", "--concepts"},
    {"prompt template", "--prompt-template"},
    {"samples", "--samples"},
    {"weights", "--weights"},
    {"model weights", "--model-weights"},
    {"word prompt template", "--template"},
    {"word list", "--words"},
    {"chromaticity", "--chromaticity"},
    {"endpoint", "--endpoint"},
    {"model name", "--model"},
    {"requested image size", "--size"},
    {"request parameters", "--param"},
    {"API profile", "--api"},
    {"degradation profile", "--profile"},
    {"variations", "--variations"},
    {"scale", "--scale"},
    {"ground-truth image size", "--image-size"},
    {"prompt languages", "--languages"},
    {"outlier threshold", "--threshold"},
};

Status InFlagTerms(const Status& st) {
  for (const auto& [input, flag] : kFlagOfInput) {
    const std::string& where = st.where();
    if (where.rfind(input, 0) != 0 || (where.size() > input.size() && where[input.size()] != ' ')) continue;
    return Status(st.code(), st.what(), std::string(flag) + where.substr(input.size()), st.expected());
  }
  return st;
}

int ExitCodeFor(const Status& st) {
  if (st.ok()) return 0;
  if (st.code() == StatusCode::kInterrupted) return 130;
  return 2;
}

int Main(int argc, char** argv) {
  CLI::App app{
      "visalign - measure how vision-language and text-to-image models align with human perception of "
      "color and concepts (VIOLIN, Hues and Cues, ACVA-Bench).",
      "visalign"};
  app.set_version_flag("--version", std::string("visalign ") + kVersion);
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `visalign color convert red --json`
  Cli cli(app);
  GlobalOptions& g = cli.mutable_global();
  app.add_flag("--json", g.json, "Machine-readable JSON output on stdout");
  app.add_option("--log-level", g.log_level, "Logging: trace, debug, info, warn, error, off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->capture_default_str();
  app.add_option("--threads", g.threads, "Worker threads (0 = all cores)")->check(CLI::NonNegativeNumber);
  app.add_flag("--offline", g.offline, "Models by name (--clip-model hf-hub:... or MODEL/TAG) only from the cache");
  uint64_t max_image_pixels = imaging::kDefaultMaxImagePixels;
  app.add_option("--max-image-pixels", max_image_pixels,
                 "Largest image (width x height) to decode; larger ones are refused from their header")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.footer(
      "Errors print one line `error: <what> (<where>): <expected>` and exit with code 2.\n"
      "Run `visalign <command> --help` for a command's options.");

  // Only the named command's groups are built (CLI11 costs ~8 M instructions to build them all):
  // all of them for --help before a command, an unknown command or none, none for --version.
  const NamedCommand named = FindNamedCommand(argc, argv);
  if (!named.version_only) {
    if (Status built = CommandGroup::Add(cli, named.help_first ? "" : named.command); !built.ok()) {
      std::fprintf(stderr, "error: %s\n", built.ToString().c_str());
      return ExitCodeFor(built);
    }
  }

  const std::vector<std::string> rewritten = cli.RewriteDeprecated(argc, argv);
  std::vector<char*> pointers;
  for (const std::string& a : rewritten) pointers.push_back(const_cast<char*>(a.c_str()));
  argc = static_cast<int>(pointers.size());
  pointers.push_back(nullptr);
  argv = pointers.data();
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n", ParseErrorStatus(e, app, argc, argv).ToString().c_str());
    return 2;
  }

  spdlog::set_default_logger(spdlog::stderr_color_mt("visalign"));
  spdlog::set_pattern("%^%l%$: %v");
  spdlog::set_level(spdlog::level::from_str(g.log_level));
  SetThreadCount(g.threads);
  imaging::SetMaxImagePixels(max_image_pixels);
  if (g.log_level == "off" || g.log_level == "error") Progress::SetGloballyEnabled(false);

  Status st;
  try {
    st = cli.RunAction();
  } catch (...) {
    st = StatusFromCurrentException();
  }
  if (!st.ok()) std::fprintf(stderr, "error: %s\n", InFlagTerms(st).ToString().c_str());
  return ExitCodeFor(st);
}

}  // namespace
}  // namespace visalign::cli

int main(int argc, char** argv) { return visalign::cli::Main(argc, argv); }
