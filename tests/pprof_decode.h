#pragma once

// Reads back what the pprof writer wrote, with the same generated classes.

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "report/pprof.pb.h"

namespace ebprof::report::fakes {

inline perftools::profiles::Profile decode_pprof(const std::string& gz) {
  std::string raw(1 << 20, '\0');
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 16 + MAX_WBITS), Z_OK);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  zs.avail_in = static_cast<uInt>(gz.size());
  zs.next_out = reinterpret_cast<Bytef*>(raw.data());
  zs.avail_out = static_cast<uInt>(raw.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  raw.resize(zs.total_out);
  inflateEnd(&zs);
  perftools::profiles::Profile p;
  EXPECT_TRUE(p.ParseFromString(raw));
  return p;
}

}  // namespace ebprof::report::fakes
