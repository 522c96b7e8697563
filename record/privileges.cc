#include "record/privileges.h"

namespace ebprof::record {

Error missing_privileges(const std::string& what) {
  return Error("permission denied " + what +
               ": run ebprof-record as root (or grant CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)");
}

}  // namespace ebprof::record
