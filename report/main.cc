// ebprof-report: reads a recording anywhere and writes a report.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/main_guard.h"
#include "report/dump_writer.h"
#include "report/folded_writer.h"
#include "report/info_writer.h"
#include "report/profile.h"
#include "report/symbolizer.h"
#include "report/top_writer.h"

namespace {

ebprof::report::Profile load(const std::string& input) {
  ebprof::report::Profile profile = ebprof::report::load_profile(input);
  if (!profile.warning.empty())
    std::fprintf(stderr, "ebprof-report: warning: %s\n", profile.warning.c_str());
  return profile;
}

}  // namespace

int main(int argc, char** argv) {
  std::string input = "ebprof.data";
  std::string format = "top";
  ebprof::report::TopOptions top;

  CLI::App app{"Symbolize an ebprof recording and report where the time went.", "ebprof-report"};
  app.add_option("-i,--input", input, "Recording to read")->capture_default_str();
  app.add_option("--format", format, "top: self time per function; folded: flamegraph.pl input")
      ->capture_default_str()
      ->check(CLI::IsMember({"top", "folded"}));
  app.add_option("-n,--rows", top.rows, "Rows in the top table (0: all)")->capture_default_str();
  auto* info = app.add_subcommand(
      "info",
      "Describe the recording: header, counts, losses, embedded symbols, bytes per section");
  auto* dump = app.add_subcommand("dump", "Print every frame of the recording as text");
  for (auto* sub : {info, dump}) {
    sub->fallthrough();  // -i given after the subcommand still counts
    sub->add_option("file", input, "Recording to read (same as -i)");
  }
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ebprof-report: %s (see --help)\n", e.what());
    return 2;
  }

  return ebprof::run_guarded("ebprof-report", [&] {
    std::ios::sync_with_stdio(false);
    if (dump->parsed()) {
      ebprof::report::write_dump(std::cout, input);
    } else if (info->parsed()) {
      ebprof::report::write_info(std::cout, input, load(input));
    } else {
      ebprof::report::Profile profile = load(input);
      auto stacks = ebprof::report::symbolize(profile);
      if (format == "folded")
        ebprof::report::write_folded(std::cout, stacks);
      else
        ebprof::report::write_top(std::cout, profile, stacks, top);
    }
    std::cout.flush();
  });
}
