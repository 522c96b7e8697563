#pragma once

#include <ostream>
#include <string>

namespace ebprof::report {

// `ebprof-report dump`: every frame of the recording at `path` as readable
// text, in file order, streaming (for debugging and bug reports). Ends with
// the reader's warning when the file is cut or damaged.
void write_dump(std::ostream& out, const std::string& path);

}  // namespace ebprof::report
