// See cli_hints.hpp.
#include "cli_hints.hpp"

#include <cctype>
#include <vector>

#include "core/suggest.hpp"

namespace hw::cli {

namespace {

std::vector<CLI::App*> subcommands_of(CLI::App* app) {
  return app->get_subcommands([](CLI::App*) { return true; });
}

// The option of `app` or of the commands above it (fallthrough) named `flag`.
bool known_option(const std::vector<CLI::App*>& chain, const std::string& flag) {
  for (CLI::App* a : chain)
    for (const CLI::Option* o : a->get_options())
      if (o->check_name(flag)) return true;
  return false;
}

std::vector<std::string> option_names(const std::vector<CLI::App*>& chain) {
  std::vector<std::string> names;
  for (CLI::App* a : chain)
    for (const CLI::Option* o : a->get_options()) {
      for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    }
  return names;
}

}  // namespace

std::string command_line_hint(CLI::App& app, int argc, char** argv) {
  std::vector<CLI::App*> chain{&app};
  std::string hint;
  bool positional_seen = false;  // after a command's positional, words are values
  for (int i = 1; i < argc; ++i) {
    const std::string w = argv[i];
    if (w == "--") break;
    if (w.size() > 1 && w[0] == '-' && !(w.size() > 1 && (std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.'))) {
      const std::string flag = w.substr(0, w.find('='));
      if (known_option(chain, flag)) continue;
      if (flag.rfind("--", 0) == 0) {
        const std::string s = did_you_mean(flag, option_names(chain), 3);
        if (!s.empty()) hint += "heartwave: unknown option " + flag + s + "\n";
      }
      continue;
    }
    CLI::App* cur = chain.back();
    CLI::App* sub = nullptr;
    for (CLI::App* s : subcommands_of(cur))
      if (s->check_name(w)) sub = s;
    if (sub) {
      chain.push_back(sub);
      positional_seen = false;
      continue;
    }
    const auto subs = subcommands_of(cur);
    if (!subs.empty() && !positional_seen && cur->get_options([](CLI::Option* o) { return o->get_positional(); }).empty()) {
      std::vector<std::string> names;
      for (CLI::App* s : subs) names.push_back(s->get_name());
      const std::string s = did_you_mean(w, names, 3);
      if (!s.empty())
        hint += "heartwave: unknown command '" + w + "'" + (cur == &app ? "" : " of " + cur->get_name()) + s + "\n";
      return hint;
    }
    positional_seen = true;
  }
  return hint;
}

}  // namespace hw::cli
