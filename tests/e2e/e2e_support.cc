#include "tests/e2e/e2e_support.h"

#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

extern char** environ;

namespace ebprof::e2e {

const std::string kRecord = EBPROF_RECORD_BIN;
const std::string kReport = EBPROF_REPORT_BIN;
const std::string kHotcold = EBPROF_HOTCOLD_BIN;
const std::string kWithfp = EBPROF_WITHFP_BIN;
const std::string kLeafChain = "demo::hot_leaf(unsigned long)";

std::string temp_file(const std::string& name) {
  return (fs::path(testing::TempDir()) / name).string();
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Outcome run(const std::string& command) {
  std::string out = temp_file("cmd.out"), err = temp_file("cmd.err");
  int rc = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  return Outcome{WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc), slurp(out), slurp(err)};
}

int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

pid_t spawn(std::vector<std::string> argv) {
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0)
    return -1;
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

Shares hotcold_shares(const std::string& folded) {
  Shares s;
  std::istringstream in(folded);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("hotcold;", 0) != 0)
      continue;
    uint64_t n = std::stoull(line.substr(line.rfind(' ') + 1));
    s.total += n;
    if (line.find("main;demo::caller_a();" + kLeafChain) != std::string::npos)
      s.via_a += n;
    if (line.find("main;demo::caller_b();" + kLeafChain) != std::string::npos)
      s.via_b += n;
  }
  return s;
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir = temp_file(name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> switched_files(const std::string& out) {
  std::vector<std::string> files;
  const fs::path dir = fs::path(out).parent_path();
  const std::string prefix = fs::path(out).filename().string() + ".";
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(prefix) && name != prefix + "old")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

uint64_t samples_in(const std::string& file) {
  const std::string info = run(kReport + " info " + file).out;
  const size_t at = info.find("\nsamples ");
  return at == std::string::npos ? 0 : std::stoull(info.substr(at + 9));
}

}  // namespace ebprof::e2e
