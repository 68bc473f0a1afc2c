// Network Status Monitor (program 100024, version 1: X/Open XNFS, the statd that
// goes with NLM) types and their XDR codecs, plus the callback a status monitor
// sends to the program that asked it to monitor a host (SM_MON's my_id names the
// program, version and procedure; the argument is `Status` with SM_MON's priv).
//
// Bounds enforced by decode(): every name at most kMaxStrLen (SM_MAXSTRLEN, 1024)
// bytes; res must be stat_succ or stat_fail. priv is a fixed 16 bytes.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "protocol/xdr.h"

namespace nfsgw::nsm {

constexpr std::uint32_t kProgram = 100024;
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kMaxStrLen = 1024;  // SM_MAXSTRLEN
constexpr std::size_t kPrivSize = 16;

enum class Proc : std::uint32_t {
  Null = 0,
  Stat = 1,
  Mon = 2,
  Unmon = 3,
  UnmonAll = 4,
  SimuCrash = 5,
  Notify = 6,
};

/// res: whether the monitor agrees to (or can) monitor.
enum class Result : std::uint32_t { Success = 0, Failure = 1 };

using Priv = std::array<std::uint8_t, kPrivSize>;

/// sm_name: SM_STAT's argument.
struct SmName {
  std::string mon_name;
  friend bool operator==(const SmName&, const SmName&) = default;
};

/// my_id: who is to be called back, and how.
struct MyId {
  std::string my_name;
  std::int32_t my_prog = 0;
  std::int32_t my_vers = 0;
  std::int32_t my_proc = 0;
  friend bool operator==(const MyId&, const MyId&) = default;
};

/// mon_id: SM_UNMON's argument.
struct MonId {
  std::string mon_name;
  MyId my_id;
  friend bool operator==(const MonId&, const MonId&) = default;
};

/// mon: SM_MON's argument; priv comes back in the callback.
struct Mon {
  MonId mon_id;
  Priv priv{};
  friend bool operator==(const Mon&, const Mon&) = default;
};

/// sm_stat_res: the result of SM_STAT and SM_MON.
struct StatRes {
  Result res = Result::Success;
  std::int32_t state = 0;
  friend bool operator==(const StatRes&, const StatRes&) = default;
};

/// sm_stat: the result of SM_UNMON and SM_UNMON_ALL (the local state number).
struct SmStat {
  std::int32_t state = 0;
  friend bool operator==(const SmStat&, const SmStat&) = default;
};

/// stat_chge: SM_NOTIFY's argument (a host that rebooted tells the others).
struct StatChange {
  std::string mon_name;
  std::int32_t state = 0;
  friend bool operator==(const StatChange&, const StatChange&) = default;
};

/// status (sm_status): the callback a status monitor sends to my_prog/my_vers/
/// my_proc when a monitored host's state changed, with the priv SM_MON gave it.
struct Status {
  std::string mon_name;
  std::int32_t state = 0;
  Priv priv{};
  friend bool operator==(const Status&, const Status&) = default;
};

void decode(xdr::Reader& r, SmName& v);
void encode(xdr::Writer& w, const SmName& v);
void decode(xdr::Reader& r, MyId& v);
void encode(xdr::Writer& w, const MyId& v);
void decode(xdr::Reader& r, MonId& v);
void encode(xdr::Writer& w, const MonId& v);
void decode(xdr::Reader& r, Mon& v);
void encode(xdr::Writer& w, const Mon& v);
void decode(xdr::Reader& r, StatRes& v);
void encode(xdr::Writer& w, const StatRes& v);
void decode(xdr::Reader& r, SmStat& v);
void encode(xdr::Writer& w, const SmStat& v);
void decode(xdr::Reader& r, StatChange& v);
void encode(xdr::Writer& w, const StatChange& v);
void decode(xdr::Reader& r, Status& v);
void encode(xdr::Writer& w, const Status& v);

}  // namespace nfsgw::nsm
