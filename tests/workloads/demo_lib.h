#pragma once

namespace demo {

// Burns CPU for `iterations` rounds. Lives in a shared library so that
// symbolizing it exercises shared-library load bias.
void hot_leaf(unsigned long iterations);

}  // namespace demo
