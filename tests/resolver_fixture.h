#pragma once

// The stack resolver of a report as ebprof-report composes it (files,
// names, the DWARF unwinder and the frame-pointer one), for tests that
// aggregate recordings they made.

#include <memory>

#include "report/locate/file_finder.h"
#include "report/resolve/stack_resolver.h"
#include "report/symbolize/symbolizer.h"
#include "report/unwind/dwarf_unwinder.h"
#include "report/unwind/frame_pointer_unwinder.h"

namespace ebprof::report::fakes {

struct TestResolver {
  explicit TestResolver(const SymbolizeOptions& options = {})
      : files(options),
        symbolizer(options, files, std::make_shared<FrameTable>()),
        resolver(symbolizer) {
    resolver.add(std::make_unique<DwarfUnwinder>(files));
    resolver.add(std::make_unique<FramePointerUnwinder>());
  }
  FileFinder files;
  Symbolizer symbolizer;
  StackResolver resolver;
};

}  // namespace ebprof::report::fakes
