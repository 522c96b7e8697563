#pragma once

#include <string>

// Debian's chromium, headless, as the tests and bench/flamegraph.sh start
// it: no sandbox (root in CI), no GPU, no network, console messages on
// stderr (as ":CONSOLE" lines), a fixed window. Append --dump-dom or
// --screenshot=FILE and the page's address.
inline std::string headless_chromium() {
  return "chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
         "--enable-logging=stderr --v=0 --window-size=1280,600 ";
}
