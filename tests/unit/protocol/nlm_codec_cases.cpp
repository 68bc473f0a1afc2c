// The NLM v4 / NSM v1 case catalogue (nlm_codec_cases.h).
#include "tests/unit/protocol/nlm_codec_cases.h"

#include <numeric>

namespace nfsgw::test::nlm_cases {

namespace {

Bytes fill(std::size_t n, std::uint8_t first) {
  Bytes b(n);
  std::iota(b.begin(), b.end(), first);
  return b;
}

template <typename T>
NlmCase make(std::string name, T value) {
  NlmCase c;
  c.name = std::move(name);
  c.encoded = encoded(value);
  c.decode = [](std::span<const std::uint8_t> in) {
    T v{};
    xdr::Reader r(in);
    if constexpr (requires { nlm4::decode(r, v); }) {
      nlm4::decode(r, v);
    } else {
      nsm::decode(r, v);
    }
    return r.position();
  };
  c.decodes_to_original = [value](std::span<const std::uint8_t> in) { return decoded<T>(in) == value; };
  c.reencode = [](std::span<const std::uint8_t> in) { return encoded(decoded<T>(in)); };
  return c;
}

}  // namespace

nlm4::Lock sample_lock() {
  nlm4::Lock l;
  l.caller_name = "client-7.example";
  l.fh = nfs3::FileHandle(fill(28, 0x40));
  l.oh = fill(11, 0x90);  // odd length: padding
  l.svid = 4242;
  l.offset = 0x0000000100000010ull;  // above 4 GiB: the v4 64-bit offsets
  l.length = 0x20;
  return l;
}

nlm4::LockArgs sample_lock_args() {
  nlm4::LockArgs a;
  a.cookie = fill(8, 1);
  a.block = true;
  a.exclusive = true;
  a.lock = sample_lock();
  a.reclaim = false;
  a.state = 17;
  return a;
}

nlm4::ShareArgs sample_share_args() {
  nlm4::ShareArgs a;
  a.cookie = fill(3, 7);
  a.share.caller_name = "dos-box";
  a.share.fh = nfs3::FileHandle(fill(64, 0));
  a.share.oh = fill(5, 0x30);
  a.share.mode = nlm4::ShareMode::DenyWrite;
  a.share.access = nlm4::ShareAccess::ReadWrite;
  a.reclaim = true;
  return a;
}

nsm::Mon sample_mon() {
  nsm::Mon m;
  m.mon_id.mon_name = "client-7.example";
  m.mon_id.my_id.my_name = "nfsgw";
  m.mon_id.my_id.my_prog = static_cast<std::int32_t>(nlm4::kProgram);
  m.mon_id.my_id.my_vers = 4;
  m.mon_id.my_id.my_proc = 16;
  for (std::size_t i = 0; i < m.priv.size(); ++i) m.priv[i] = static_cast<std::uint8_t>(0xC0 + i);
  return m;
}

const std::vector<NlmCase>& all_nlm_cases() {
  static const std::vector<NlmCase> cases = [] {
    std::vector<NlmCase> v;
    nlm4::TestArgs test;
    test.cookie = fill(4, 9);
    test.exclusive = false;
    test.lock = sample_lock();
    test.lock.length = 0;  // to the end
    v.push_back(make("Nlm4TestArgs", test));

    v.push_back(make("Nlm4LockArgs", sample_lock_args()));
    nlm4::LockArgs reclaim = sample_lock_args();
    reclaim.reclaim = true;
    reclaim.block = false;
    reclaim.cookie.clear();
    reclaim.lock.oh.clear();
    reclaim.lock.caller_name.clear();
    reclaim.state = -3;
    v.push_back(make("Nlm4LockArgsReclaimEmpty", reclaim));

    nlm4::CancelArgs cancel;
    cancel.cookie = fill(1, 0xAA);
    cancel.block = true;
    cancel.exclusive = false;
    cancel.lock = sample_lock();
    v.push_back(make("Nlm4CancelArgs", cancel));

    nlm4::UnlockArgs unlock;
    unlock.cookie = fill(12, 0x11);
    unlock.lock = sample_lock();
    unlock.lock.offset = ~0ull;
    unlock.lock.length = ~0ull;
    v.push_back(make("Nlm4UnlockArgs", unlock));

    v.push_back(make("Nlm4ShareArgs", sample_share_args()));

    nlm4::Notify notify;
    notify.name = "rebooted-host";
    notify.state = 5;
    v.push_back(make("Nlm4Notify", notify));

    for (nlm4::Stat s : {nlm4::Stat::Granted, nlm4::Stat::Blocked, nlm4::Stat::Failed}) {
      nlm4::Res res;
      res.cookie = fill(6, 0x21);
      res.stat = s;
      v.push_back(make(std::string("Nlm4Res_") + std::to_string(static_cast<int>(s)), res));
    }

    nlm4::TestRes granted;
    granted.cookie = fill(4, 9);
    granted.stat = nlm4::Stat::Granted;
    v.push_back(make("Nlm4TestResGranted", granted));
    nlm4::TestRes denied;
    denied.cookie = fill(4, 9);
    denied.stat = nlm4::Stat::Denied;
    denied.holder.exclusive = true;
    denied.holder.svid = -1;
    denied.holder.oh = fill(9, 0x50);
    denied.holder.offset = 100;
    denied.holder.length = 0;
    v.push_back(make("Nlm4TestResDenied", denied));

    nlm4::ShareRes share_res;
    share_res.cookie = fill(3, 7);
    share_res.stat = nlm4::Stat::DeniedGracePeriod;
    share_res.sequence = 99;
    v.push_back(make("Nlm4ShareRes", share_res));

    v.push_back(make("NsmSmName", nsm::SmName{"origin.example"}));
    v.push_back(make("NsmMyId", sample_mon().mon_id.my_id));
    v.push_back(make("NsmMonId", sample_mon().mon_id));
    v.push_back(make("NsmMon", sample_mon()));
    v.push_back(make("NsmStatResSucc", nsm::StatRes{nsm::Result::Success, 3}));
    v.push_back(make("NsmStatResFail", nsm::StatRes{nsm::Result::Failure, -7}));
    v.push_back(make("NsmSmStat", nsm::SmStat{41}));
    v.push_back(make("NsmStatChange", nsm::StatChange{"client-7.example", 9}));
    nsm::Status status;
    status.mon_name = "origin.example";
    status.state = 12;
    status.priv = sample_mon().priv;
    v.push_back(make("NsmStatus", status));
    return v;
  }();
  return cases;
}

}  // namespace nfsgw::test::nlm_cases
