#pragma once

#include <string>

namespace ebprof::report {

// The readable form of a C++ (Itanium ABI) symbol name; any other name,
// or one that fails to demangle, comes back unchanged.
std::string demangle(const std::string& name);

}  // namespace ebprof::report
