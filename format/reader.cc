#include "format/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "common/error.h"
#include "common/unique_fd.h"
#include "format/crc32c.h"
#include "format/decode.h"
#include "format/framing.h"

namespace ebprof::format {
namespace {

size_t read_at(int fd, uint64_t offset, void* out, size_t size, const std::string& path);

std::optional<std::pair<uint16_t, uint16_t>> version_in_header_frame(int fd, uint64_t file_size,
                                                                     const std::string& path);

// Returns the file's (major, minor) version. Where the header frame repeats
// it (1.4) under a checksum that holds and says otherwise, the frame is
// right: the file header has no checksum, and one flipped bit there read
// as "newer version"; `repaired` then says so.
std::pair<uint16_t, uint16_t> check_file_header(int fd, uint64_t file_size, const std::string& path,
                                                std::string* repaired = nullptr) {
  std::array<uint8_t, kFileHeaderSize> h{};
  size_t n = read_at(fd, 0, h.data(), h.size(), path);
  if (n == 0)
    throw Error(path + " is empty: not an ebprof recording (did ebprof-record fail to start?)");
  if (n < kMagic.size() || !std::equal(kMagic.begin(), kMagic.end(), h.begin()))
    throw Error(path + " is not an ebprof recording (no ebprof magic at its start)");
  if (n < h.size())
    throw Error(path + " is truncated inside its 16-byte file header");
  uint16_t major = get_le16(&h[8]);
  uint16_t minor = get_le16(&h[10]);
  if (const auto framed = version_in_header_frame(fd, file_size, path);
      framed && framed->first >= 1 && framed->first <= kNewestMajor &&
      *framed != std::pair{major, minor}) {
    if (repaired)
      *repaired = path + ": its file header says version " + std::to_string(major) + "." +
                  std::to_string(minor) + ", its checksummed header frame " +
                  std::to_string(framed->first) + "." + std::to_string(framed->second) +
                  ": read as the latter (the file header is damaged)";
    return *framed;
  }
  if (major > kNewestMajor)
    throw Error(path + " has format version " + std::to_string(major) + "." +
                std::to_string(minor) + ", newer than this ebprof-report reads (up to " +
                std::to_string(kNewestMajor) + ".x): upgrade ebprof");
  if (major == 0)
    throw Error(path + " has format version 0, which never existed: file is damaged");
  return {major, minor};
}

// The version of the file header at `offset`, when one is there: the start
// of another recording joined on after this one.
std::optional<std::pair<uint16_t, uint16_t>> joined_file_header(int fd, uint64_t offset,
                                                                uint64_t file_size,
                                                                const std::string& path);

// Reads exactly `size` bytes at `offset` unless the file ends first; returns
// how many were read.
size_t read_at(int fd, uint64_t offset, void* out, size_t size, const std::string& path) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = pread(fd, static_cast<uint8_t*>(out) + done, size - done, offset + done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw_errno("reading " + path, errno);
    if (n == 0)
      break;
    done += n;
  }
  return done;
}

std::optional<std::pair<uint16_t, uint16_t>> joined_file_header(int fd, uint64_t offset,
                                                                uint64_t file_size,
                                                                const std::string& path) {
  std::array<uint8_t, kFileHeaderSize> h{};
  if (offset + h.size() > file_size || read_at(fd, offset, h.data(), h.size(), path) < h.size() ||
      !std::equal(kMagic.begin(), kMagic.end(), h.begin()))
    return std::nullopt;
  return std::pair{get_le16(&h[8]), get_le16(&h[10])};
}

// Whether a frame header's fields are self-consistent, and (with `fits`)
// whether its payload fits in the file.
bool plausible(const FrameHeader& h, uint64_t offset, uint64_t file_size, bool fits = true) {
  bool compressed = h.flags & kFrameZstd;
  return h.stored_size <= kMaxFrameBytes && h.raw_size <= kMaxFrameBytes && h.raw_size % 8 == 0 &&
         (compressed ? h.raw_size <= max_inflated_bytes(h.kind, h.stored_size)
                     : h.stored_size == h.raw_size) &&
         !(h.flags & ~kFrameZstd) && h.kind != 0 &&
         (!fits || offset + kFrameHeaderSize + h.stored_size <= file_size);
}

enum class Check { kOk, kCut, kDamaged };

// Reads the frame at `offset` into `h` and `stored` and checks its framing
// and checksum.
Check read_frame(int fd, uint64_t offset, uint64_t file_size, const std::string& path,
                 FrameHeader& h, std::vector<uint8_t>& stored, std::string& why) {
  std::array<uint8_t, kFrameHeaderSize> hb{};
  if (read_at(fd, offset, hb.data(), hb.size(), path) < hb.size()) {
    why = "file ends inside a frame header (recording cut short)";
    return Check::kCut;
  }
  h = decode_frame_header(hb.data());
  if (!plausible(h, offset, file_size)) {
    // A sane header whose payload runs past the end: the file was cut.
    bool cut = plausible(h, offset, file_size, /*fits=*/false);
    why = cut ? "file ends inside a frame (recording cut short)" : "frame header is damaged";
    return cut ? Check::kCut : Check::kDamaged;
  }
  stored.resize(h.stored_size);  // bounded: plausible() checked it against the file
  if (read_at(fd, offset + kFrameHeaderSize, stored.data(), stored.size(), path) < stored.size()) {
    why = "file ends inside a frame (recording cut short)";
    return Check::kCut;
  }
  if (crc32c(crc32c(0, hb.data(), 12), stored.data(), stored.size()) != h.crc) {
    why = "checksum mismatch";
    return Check::kDamaged;
  }
  return Check::kOk;
}

// How many bytes the search for intact frames after damage checksums at
// most: crafted data can make every offset a plausible header with a
// large payload.
uint64_t scan_budget(uint64_t file_size) {
  return 4 * file_size + (64u << 20);
}

// The version a 1.4 writer put in the header frame: the first frame, or the
// second after a merged file's Source frame.
std::optional<std::pair<uint16_t, uint16_t>> version_in_header_frame(int fd, uint64_t file_size,
                                                                     const std::string& path) {
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> zstd(ZSTD_createDCtx(), ZSTD_freeDCtx);
  std::vector<uint8_t> stored;
  std::vector<uint64_t> raw;
  uint64_t offset = kFileHeaderSize;
  for (int i = 0; i < 2 && zstd && offset < file_size; ++i) {
    FrameHeader h;
    std::string why;
    if (read_frame(fd, offset, file_size, path, h, stored, why) != Check::kOk)
      return std::nullopt;
    if (h.kind == static_cast<uint16_t>(FrameType::kRecordingInfo)) {
      if (!unpack(h, stored, raw, zstd.get()).empty())
        return std::nullopt;
      return header_version(raw);
    }
    offset += kFrameHeaderSize + h.stored_size;
  }
  return std::nullopt;
}

// The offset of the next intact frame after damage at `from`: the first
// position whose header is plausible and whose checksum matches, or
// file_size when there is none.
uint64_t find_next_frame(int fd, uint64_t from, uint64_t file_size, const std::string& path,
                         bool& gave_up) {
  constexpr size_t kWindow = 1 << 20;
  std::vector<uint8_t> window;
  std::vector<uint8_t> stored;
  // Crafted data can make every offset a plausible header with a huge
  // payload: bound the bytes checksummed per scan, then give up.
  uint64_t budget = scan_budget(file_size);
  for (uint64_t base = from; base + kFrameHeaderSize <= file_size; base += kWindow) {
    window.resize(std::min<uint64_t>(kWindow + kFrameHeaderSize, file_size - base));
    size_t n = read_at(fd, base, window.data(), window.size(), path);
    for (size_t i = 0; i + kFrameHeaderSize <= n && i < kWindow; ++i) {
      if (!plausible(decode_frame_header(&window[i]), base + i, file_size))
        continue;
      FrameHeader h = decode_frame_header(&window[i]);
      if (h.stored_size > budget) {
        gave_up = true;
        return file_size;
      }
      budget -= h.stored_size;
      std::string why;
      if (read_frame(fd, base + i, file_size, path, h, stored, why) == Check::kOk)
        return base + i;
    }
  }
  return file_size;
}

// The recording at `path`, open, and its size.
std::pair<UniqueFd, uint64_t> open_recording(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (!fd)
    throw Error(errno_message("cannot open " + path, errno));
  struct stat st {};
  if (fstat(fd.get(), &st) != 0)
    throw_errno("reading " + path, errno);
  if (!S_ISREG(st.st_mode))
    throw Error(path + " is not a regular file: not an ebprof recording");
  return {std::move(fd), static_cast<uint64_t>(st.st_size)};
}

}  // namespace

// Why the bytes from `offset` on were not read: the search for an intact
// frame stopped at its budget, and what follows may hold intact frames.
std::string search_stopped(const std::string& path, uint64_t offset, uint64_t file_size) {
  return path + ": the search for an intact frame after the damage at byte " +
         std::to_string(offset) + " stopped at its budget (" +
         std::to_string(scan_budget(file_size) >> 20) +
         " MB checksummed, a bound against crafted files): the last " +
         std::to_string(file_size - offset) + " bytes were not read";
}

// What a file header at `offset` means: none there, a recording joined
// on (cat a b >c), which starts a source of its own as a merged file's
// inputs do, so that its tables never name the samples of another; or one
// of a version this reader cannot read, which ends the reading.
enum class Joined { kNo, kYes, kUnreadable };
Joined join_at(int fd, uint64_t offset, uint64_t file_size, const std::string& path, IdSpace& ids,
               ReadResult& result) {
  const std::optional<std::pair<uint16_t, uint16_t>> joined =
      joined_file_header(fd, offset, file_size, path);
  if (!joined)
    return Joined::kNo;
  if (joined->first > kNewestMajor || joined->first == 0) {
    result.complete = false;
    result.warning = path + ": a recording of format version " + std::to_string(joined->first) +
                     "." + std::to_string(joined->second) + " is joined on at byte " +
                     std::to_string(offset) +
                     ", which this ebprof-report does not read: upgrade ebprof";
    return Joined::kUnreadable;
  }
  ids.start_source();
  ids.merged = ids.merged || joined->first >= kMergedVersionMajor;
  ++result.joined;
  return Joined::kYes;
}

// A merged file (2.2 on) ends with the number of sources it holds: one cut
// where a source begins reads whole up to there, and only this tells that
// sources are missing.
void check_merge_end(const IdSpace& ids, ReadResult& result, const std::string& path) {
  if (!ids.merged || result.version_major != kMergedVersionMajor || result.version_minor < 2)
    return;
  const uint64_t read = uint64_t{ids.source} + 1;
  std::string missing;
  if (!ids.merge_end)
    missing = path + " ends before its end frame (after " + std::to_string(read) +
              " source(s)): it was cut, and the sources that followed are missing";
  else if (*ids.merge_end > read)
    missing = path + " holds " + std::to_string(read) + " of the " +
              std::to_string(*ids.merge_end) + " sources its end frame names: the rest are lost";
  if (missing.empty())
    return;
  result.complete = false;
  result.warning = result.warning.empty() ? missing : result.warning + "; " + missing;
}

// The one warning line: joined recordings, damage, then how the file ended.
void sum_up(ReadResult& result, const std::string& first_damage, const std::string& path) {
  if (result.joined) {
    std::string joined = path + " holds " + std::to_string(result.joined + 1) +
                         " recordings joined end to end (as cat makes): each is read as a " +
                         "recording of its own, as `ebprof-report merge` would have kept them";
    result.warning = result.warning.empty() ? joined : joined + "; " + result.warning;
  }
  if (result.damaged_frames) {
    result.complete = false;
    std::string damage = path + ": " + std::to_string(result.damaged_frames) +
                         " damaged frame(s) skipped, " + std::to_string(result.skipped_bytes) +
                         " bytes (first: " + first_damage + ")";
    result.warning = result.warning.empty() ? damage : damage + "; " + result.warning;
  }
}

std::pair<uint16_t, uint16_t> read_version(const std::string& path) {
  auto [fd, file_size] = open_recording(path);
  return check_file_header(fd.get(), file_size, path);
}

// A frame of a copied kind, as its copy names it: which source, kind,
// size and checksum. Its checksum covers its header and payload.
using OriginalKey = std::tuple<uint32_t, uint16_t, uint32_t, uint32_t>;

OriginalKey original_key(const IdSpace& ids, const FrameHeader& h) {
  return {ids.source, h.kind, h.stored_size, h.crc};
}

// The frame inside a copy (1.6).
struct CopiedFrame {
  FrameHeader header;
  std::vector<uint8_t> stored;
};

enum class Copy { kNone, kPassedOver, kStandsIn, kDamaged };

// A copy is passed over when its original was read, and stands in for it
// when that was damaged. It holds its original's header, checksum
// inverted (so that the search for an intact frame never takes the bytes
// inside a copy for one), then its payload. One that holds no intact
// frame of a copied kind is damaged (`why`), though its own checksum held.
Copy open_copy(const FrameHeader& h, const std::vector<uint8_t>& stored, std::vector<uint64_t>& raw,
               ZSTD_DCtx* zstd, const IdSpace& ids, const std::set<OriginalKey>& originals,
               CopiedFrame& copied, std::string& why) {
  why = unpack(h, stored, raw, zstd);
  if (!why.empty())
    return Copy::kDamaged;
  if (const std::span<const uint8_t> frame = copied_bytes(raw); frame.size() >= kFrameHeaderSize) {
    copied.header = decode_frame_header(frame.data());
    copied.header.crc = ~copied.header.crc;
    const FrameHeader& inner = copied.header;
    if (copied_type(static_cast<FrameType>(inner.kind)) && plausible(inner, 0, frame.size()) &&
        crc32c(crc32c(0, frame.data(), 12), frame.data() + kFrameHeaderSize, inner.stored_size) ==
            inner.crc) {
      if (originals.contains(original_key(ids, inner)))
        return Copy::kPassedOver;
      copied.stored.assign(frame.begin() + kFrameHeaderSize,
                           frame.begin() + kFrameHeaderSize + inner.stored_size);
      return Copy::kStandsIn;
    }
  }
  why = "frame is damaged: a copy of no intact frame";
  return Copy::kDamaged;
}

// What delivering one file's intact frames keeps from one to the next.
struct FrameDelivery {
  RecordingVisitor& visitor;
  const std::string& path;
  ZSTD_DCtx* zstd;
  IdSpace& ids;
  std::vector<uint64_t> raw;        // 8-byte aligned, as Cap'n Proto words must be
  std::set<OriginalKey> originals;  // the copied kinds' frames read intact
  CopiedFrame copied;

  // Hands the intact frame `h`, its payload `stored`, to the visitor; a
  // copy (1.6) in place of its damaged original, or passed over. Returns
  // why the frame is damaged, or "".
  std::string deliver(const FrameHeader& h, const std::vector<uint8_t>& stored, FrameInfo info,
                      bool allow_gaps) {
    std::string why;
    const Copy copy = h.kind == static_cast<uint16_t>(FrameType::kCopy)
                          ? open_copy(h, stored, raw, zstd, ids, originals, copied, why)
                          : Copy::kNone;
    if (copy == Copy::kDamaged)
      return why;
    if (copy == Copy::kPassedOver) {
      info.source = ids.source;
      visitor.on_frame(info);
      return "";
    }
    const bool stands_in = copy == Copy::kStandsIn;
    const FrameHeader& frame = stands_in ? copied.header : h;
    if (stands_in)
      info.kind = frame_type_name(frame.kind);
    why = decode_frame(frame, stands_in ? copied.stored : stored, raw, zstd, ids, allow_gaps,
                       visitor, info, path);
    if (why.empty() && copied_type(static_cast<FrameType>(frame.kind)))
      originals.insert(original_key(ids, frame));
    return why;
  }
};

ReadResult read_recording(const std::string& path, RecordingVisitor& visitor) {
  auto [fd, file_size] = open_recording(path);

  ReadResult result;
  std::string repaired;
  std::tie(result.version_major, result.version_minor) =
      check_file_header(fd.get(), file_size, path, &repaired);
  IdSpace ids;
  ids.merged = result.version_major >= kMergedVersionMajor;
  uint64_t offset = kFileHeaderSize;
  // One decompression context for the whole file: ZSTD_decompress() would
  // allocate and free one, window included, for every frame.
  std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> zstd(ZSTD_createDCtx(), ZSTD_freeDCtx);
  if (!zstd)
    throw Error("zstd cannot start decompressing: out of memory");
  std::vector<uint8_t> stored;
  FrameDelivery delivery{visitor, path, zstd.get(), ids};
  std::string first_damage;

  while (offset < file_size) {
    if (const Joined joined = join_at(fd.get(), offset, file_size, path, ids, result);
        joined != Joined::kNo) {
      if (joined == Joined::kUnreadable)
        break;
      offset += kFileHeaderSize;
      continue;
    }
    FrameHeader h;
    std::string why;
    uint64_t next;  // where reading goes on after a damaged frame
    Check check = read_frame(fd.get(), offset, file_size, path, h, stored, why);
    if (check == Check::kOk) {
      next = offset + kFrameHeaderSize + h.stored_size;
      // Ids may jump after damage: here, or in an input a merge read.
      why =
          delivery.deliver(h, stored,
                           FrameInfo{result.frames, offset, frame_type_name(h.kind), h.stored_size,
                                     h.raw_size, static_cast<bool>(h.flags & kFrameZstd)},
                           result.damaged_frames > 0 || ids.merged);
      if (why.empty()) {
        ++result.frames;
        offset = next;
        continue;
      }
      // Its checksum held, so it ends where its header says: scanning
      // inside its payload could find bytes that only look like a frame.
    } else {
      bool gave_up = false;
      next = find_next_frame(fd.get(), offset + 1, file_size, path, gave_up);
      if (gave_up)
        result.warning = search_stopped(path, offset, file_size);  // said, not silent
      // A length that runs past the end means a cut file only if no intact
      // frame follows; otherwise the length itself is damaged.
      if (check == Check::kCut && next == file_size && !gave_up) {
        result.complete = false;
        result.warning = path + ": " + why + " at byte " + std::to_string(offset) +
                         "; the report covers the " + std::to_string(result.frames) +
                         " complete frames before it";
        break;
      }
      if (check == Check::kCut)
        why = "frame header is damaged";
    }
    if (result.damaged_frames++ == 0)
      first_damage = why + " at byte " + std::to_string(offset);
    result.skipped_bytes += next - offset;
    offset = next;
  }
  if (result.frames == 0)
    throw Error(path + " holds no intact frame: recording is unusable");
  check_merge_end(ids, result, path);
  sum_up(result, first_damage, path);
  if (!repaired.empty()) {
    result.complete = false;
    result.warning = result.warning.empty() ? repaired : repaired + "; " + result.warning;
  }
  return result;
}

}  // namespace ebprof::format
