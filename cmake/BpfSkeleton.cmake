# Compiles BPF C programs (CO-RE) and turns each into a libbpf skeleton.
#
#   add_bpf_skeleton(<name> SOURCES <file.bpf.c>...)
#
# compiles each source, links them into one BPF object with bpftool, and
# creates an INTERFACE target <name>_skel whose include directory holds
# <name>.skel.h, declaring struct <name>_bpf. Header dependencies of the BPF source come from clang's
# depfile, so editing bpf/profile.h rebuilds the skeleton.

find_program(BPF_CLANG NAMES clang clang-16 clang-15 clang-14)
find_program(BPF_LLVM_STRIP NAMES llvm-strip llvm-strip-16 llvm-strip-15 llvm-strip-14)
find_program(BPF_BPFTOOL NAMES bpftool PATHS /usr/sbin /sbin)
foreach(tool BPF_CLANG BPF_LLVM_STRIP BPF_BPFTOOL)
  if(NOT ${tool})
    message(FATAL_ERROR "${tool} not found: install clang, llvm and bpftool (scripts/setup.sh does)")
  endif()
endforeach()

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|amd64")
  set(BPF_TARGET_ARCH x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(BPF_TARGET_ARCH arm64)
else()
  message(FATAL_ERROR "BPF: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# With -target bpf clang drops the host's system include directories, but
# libbpf's headers and asm/ types live there; add them back after ours.
execute_process(COMMAND ${BPF_CLANG} -v -E - INPUT_FILE /dev/null
                OUTPUT_QUIET ERROR_VARIABLE _clang_verbose)
string(REGEX MATCH "#include <...> search starts here:\n(.*)End of search list" _ "${_clang_verbose}")
string(REGEX REPLACE "\n +" ";" _sys_dirs "${CMAKE_MATCH_1}")
set(BPF_SYSTEM_INCLUDES "")
foreach(dir IN LISTS _sys_dirs)
  string(STRIP "${dir}" dir)
  if(dir)
    list(APPEND BPF_SYSTEM_INCLUDES -idirafter ${dir})
  endif()
endforeach()

# vmlinux.h is generated once, at configure time, from the build host's BTF.
# CO-RE relocations make the resulting program independent of that kernel;
# see docs/architecture.md for why it is not checked in.
set(EBPROF_VMLINUX_BTF /sys/kernel/btf/vmlinux CACHE FILEPATH "BTF used to generate vmlinux.h")
set(BPF_VMLINUX_DIR ${CMAKE_BINARY_DIR}/vmlinux)
if(NOT EXISTS ${BPF_VMLINUX_DIR}/vmlinux.h)
  if(NOT EXISTS ${EBPROF_VMLINUX_BTF})
    message(FATAL_ERROR "no kernel BTF at ${EBPROF_VMLINUX_BTF}: build on a kernel with "
                        "CONFIG_DEBUG_INFO_BTF or pass -DEBPROF_VMLINUX_BTF=<file>")
  endif()
  file(MAKE_DIRECTORY ${BPF_VMLINUX_DIR})
  execute_process(COMMAND ${BPF_BPFTOOL} btf dump file ${EBPROF_VMLINUX_BTF} format c
                  OUTPUT_FILE ${BPF_VMLINUX_DIR}/vmlinux.h.tmp RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "bpftool could not dump ${EBPROF_VMLINUX_BTF}")
  endif()
  file(RENAME ${BPF_VMLINUX_DIR}/vmlinux.h.tmp ${BPF_VMLINUX_DIR}/vmlinux.h)
endif()

function(add_bpf_skeleton name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "add_bpf_skeleton(${name}): SOURCES is required")
  endif()
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/${name}_skel)
  set(obj ${out_dir}/${name}.bpf.o)
  set(skel ${out_dir}/${name}.skel.h)
  file(MAKE_DIRECTORY ${out_dir})

  set(unit_objs "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(src ${source} ABSOLUTE)
    get_filename_component(src_dir ${src} DIRECTORY)
    get_filename_component(unit ${src} NAME_WE)
    set(unit_obj ${out_dir}/${unit}.unit.o)
    add_custom_command(
      OUTPUT ${unit_obj}
      COMMAND ${BPF_CLANG} -target bpf -D__TARGET_ARCH_${BPF_TARGET_ARCH} -g -O2 -Wall
              -I${BPF_VMLINUX_DIR} -I${src_dir} ${BPF_SYSTEM_INCLUDES}
              -MD -MF ${unit_obj}.d -c ${src} -o ${unit_obj}
      # DWARF is only needed by the compiler for BTF; the skeleton embeds the
      # object, so strip it to keep the binaries small.
      COMMAND ${BPF_LLVM_STRIP} -g ${unit_obj}
      DEPENDS ${src}
      DEPFILE ${unit_obj}.d
      COMMENT "BPF ${name}: compiling ${source}"
      VERBATIM)
    list(APPEND unit_objs ${unit_obj})
  endforeach()
  # bpftool's static linker joins the units into one object, resolving the
  # maps and settings they share (extern in all but the one defining them).
  add_custom_command(
    OUTPUT ${obj}
    COMMAND ${BPF_BPFTOOL} gen object ${obj} ${unit_objs}
    DEPENDS ${unit_objs}
    COMMENT "BPF ${name}: linking"
    VERBATIM)
  # bpftool writes the skeleton to stdout; the build tool's shell redirects it.
  add_custom_command(
    OUTPUT ${skel}
    COMMAND ${BPF_BPFTOOL} gen skeleton ${obj} name ${name}_bpf > ${skel}
    DEPENDS ${obj}
    COMMENT "BPF ${name}: generating skeleton")
  add_custom_target(${name}_skel_gen DEPENDS ${skel})
  add_library(${name}_skel INTERFACE)
  add_dependencies(${name}_skel ${name}_skel_gen)
  target_include_directories(${name}_skel INTERFACE ${out_dir})
  target_link_libraries(${name}_skel INTERFACE PkgConfig::LIBBPF)
endfunction()
