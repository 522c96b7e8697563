// ebprof-record: command line to RecordOptions, then one session.
#include <bpf/libbpf.h>

#include <cstdarg>
#include <cstdio>

#include "common/main_guard.h"
#include "record/cli.h"
#include "record/session.h"

namespace {

int print_libbpf(libbpf_print_level, const char* format, va_list args) {
  return std::vfprintf(stderr, format, args);
}

int silence_libbpf(libbpf_print_level, const char*, va_list) {
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ebprof::record::RecordOptions options;
  if (std::optional<int> status = ebprof::record::parse_command_line(argc, argv, options))
    return *status;
  libbpf_set_print(options.verbose ? print_libbpf : silence_libbpf);
  return ebprof::run_guarded("ebprof-record", [&] { return ebprof::record::run_session(options); });
}
