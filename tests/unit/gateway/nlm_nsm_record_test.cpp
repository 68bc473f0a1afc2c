// gateway/nlm/nsm_record.h: nfsgw's NSM state number and its monitored hosts, in a
// file under a temporary folder: round trip, the state rule across restarts, and
// crash safety (a torn write never loses the previous record; a cut-short file is
// refused, never half-read).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "gateway/nlm/nsm_record.h"

namespace nfsgw::nlm::nlm_nsm_record_test {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("nsm-record-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_all(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

NsmRecord two_hosts() {
  NsmRecord r;
  r.state = 7;
  r.add({"web1.example", "10.0.0.1", "10.0.0.100"});
  r.add({"web2", "fd00::2", "fd00::100"});
  return r;
}

TEST(NlmNsmRecord, NoFileIsAFirstStartWithNoHosts) {
  TempDir d;
  auto l = NsmRecordFile(d.path() / "nsm").load();
  EXPECT_TRUE(l.ok) << l.error;
  EXPECT_FALSE(l.existed);
  EXPECT_EQ(l.record, NsmRecord{});
}

TEST(NlmNsmRecord, SavedRecordLoadsBackEqual) {
  TempDir d;
  NsmRecordFile f(d.path() / "nsm");
  const NsmRecord r = two_hosts();
  ASSERT_EQ(f.save(r), "");
  auto l = f.load();
  ASSERT_TRUE(l.ok) << l.error;
  EXPECT_TRUE(l.existed);
  EXPECT_EQ(l.record, r);
  EXPECT_FALSE(fs::exists(d.path() / "nsm.tmp"));

  NsmRecord empty;
  empty.state = 9;
  ASSERT_EQ(f.save(empty), "");
  EXPECT_EQ(f.load().record, empty);
}

TEST(NlmNsmRecord, AddReplacesTheSameNameAndRemoveForgetsIt) {
  NsmRecord r = two_hosts();
  EXPECT_FALSE(r.add({"web1.example", "10.0.0.1", "10.0.0.100"}));  // unchanged
  EXPECT_TRUE(r.add({"web1.example", "10.0.0.5", "10.0.0.100"}));   // moved
  ASSERT_EQ(r.hosts.size(), 2u);
  EXPECT_EQ(r.find("web1.example")->address, "10.0.0.5");
  EXPECT_TRUE(r.remove("web1.example"));
  EXPECT_FALSE(r.remove("web1.example"));
  EXPECT_EQ(r.find("web1.example"), nullptr);
  EXPECT_EQ(r.hosts.size(), 1u);
}

TEST(NlmNsmRecord, StateIsOddWhileUpAndOnlyGrows) {
  EXPECT_EQ(next_up_state(0), 1);
  EXPECT_EQ(next_up_state(1), 3);   // killed while up (odd on disk)
  EXPECT_EQ(next_up_state(2), 3);   // stopped cleanly (even on disk)
  EXPECT_EQ(next_up_state(7), 9);
  EXPECT_EQ(next_up_state(-5), 1);
  EXPECT_EQ(next_up_state(std::numeric_limits<std::int32_t>::max()), 1);
  EXPECT_EQ(next_up_state(std::numeric_limits<std::int32_t>::max() - 1), 1);
  EXPECT_EQ(down_state(3), 4);
  EXPECT_EQ(down_state(0), 2);
  for (std::int32_t s = 0; s < 50; ++s) {
    EXPECT_EQ(next_up_state(s) % 2, 1) << s;
    EXPECT_GT(next_up_state(s), s) << s;
  }
}

TEST(NlmNsmRecord, EachStartRunMovesTheStateOnDiskAndKeepsTheHosts) {
  TempDir d;
  NsmRecordFile f(d.path() / "nsm");
  auto first = f.start_run();
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.record.state, 1);
  NsmRecord r = first.record;
  r.add({"web1", "10.0.0.1", "10.0.0.100"});
  ASSERT_EQ(f.save(r), "");
  // kill -9: nothing more written. The next run is at 3, with the host kept.
  auto second = f.start_run();
  ASSERT_TRUE(second.ok) << second.error;
  EXPECT_EQ(second.record.state, 3);
  EXPECT_EQ(second.record.hosts, r.hosts);
  EXPECT_EQ(f.load().record.state, 3);  // on disk before anyone is told
  // A clean stop writes the even state; the next run is still above it.
  NsmRecord stopped = second.record;
  stopped.state = down_state(stopped.state);
  ASSERT_EQ(f.save(stopped), "");
  EXPECT_EQ(f.start_run().record.state, 5);
}

TEST(NlmNsmRecord, StartRunKeepsAtLeastTheClocksFloorAndStillGrowsAboveIt) {
  TempDir d;
  NsmRecordFile f(d.path() / "nsm");
  EXPECT_EQ(f.start_run(1000).record.state, 1001) << "made odd";
  EXPECT_EQ(f.start_run(1000).record.state, 1003) << "the record's next state is above the floor";
  EXPECT_EQ(f.start_run(5001).record.state, 5001);
  EXPECT_EQ(f.load().record.state, 5001);
  EXPECT_EQ(f.start_run(0).record.state, 5003);
}

TEST(NlmNsmRecord, ATornTemporaryFileNeverLosesThePreviousRecord) {
  TempDir d;
  const fs::path p = d.path() / "nsm";
  NsmRecordFile f(p);
  const NsmRecord r = two_hosts();
  ASSERT_EQ(f.save(r), "");
  const std::string good = read_all(p);
  // A crash part way through a later save: "<file>.tmp" holds any prefix of the
  // new text, and the rename never happened.
  NsmRecord next = r;
  next.state = 9;
  next.add({"web3", "10.0.0.3", "10.0.0.100"});
  ASSERT_EQ(NsmRecordFile(d.path() / "other").save(next), "");
  const std::string newer = read_all(d.path() / "other");
  for (std::size_t cut = 0; cut < newer.size(); ++cut) {
    write_all(d.path() / "nsm.tmp", newer.substr(0, cut));
    auto l = f.load();
    ASSERT_TRUE(l.ok) << cut << ": " << l.error;
    ASSERT_EQ(l.record, r) << cut;
  }
  // The next save replaces the leftover temporary file.
  ASSERT_EQ(f.save(next), "");
  EXPECT_EQ(f.load().record, next);
  EXPECT_EQ(read_all(p), newer);
  EXPECT_NE(good, newer);  // the control: the two records differ on disk
}

TEST(NlmNsmRecord, ACutShortFileIsRefusedNeverHalfRead) {
  TempDir d;
  const fs::path p = d.path() / "nsm";
  NsmRecordFile f(p);
  ASSERT_EQ(f.save(two_hosts()), "");
  const std::string whole = read_all(p);
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    write_all(p, whole.substr(0, cut));
    auto l = f.load();
    EXPECT_FALSE(l.ok) << "a prefix of " << cut << " bytes was accepted";
    EXPECT_FALSE(l.error.empty());
    EXPECT_EQ(l.record, NsmRecord{}) << cut;
  }
  write_all(p, whole);
  EXPECT_TRUE(f.load().ok);  // the control: the whole text loads
}

TEST(NlmNsmRecord, MalformedFilesAreRefusedWithTheReason) {
  TempDir d;
  const fs::path p = d.path() / "nsm";
  NsmRecordFile f(p);
  const std::string cases[] = {
      "something else\nstate\t1\nend\t0\n",
      "nfsgw-nsm 1\nstate\t-1\nend\t0\n",
      "nfsgw-nsm 1\nstate\t99999999999\nend\t0\n",
      "nfsgw-nsm 1\nstate\tx\nend\t0\n",
      "nfsgw-nsm 1\nstate\t1\nhost\ta\tb\tc\nend\t0\n",             // count
      "nfsgw-nsm 1\nstate\t1\nhost\ta\tb\nend\t1\n",                // fields
      "nfsgw-nsm 1\nstate\t1\nhost\ta\t\tc\nend\t1\n",              // empty field
      "nfsgw-nsm 1\nstate\t1\nhost\ta\tb\tc\nhost\ta\tb\tc\nend\t2\n",  // twice
      "nfsgw-nsm 1\nstate\t1\nhost\t" + std::string(1025, 'n') + "\tb\tc\nend\t1\n",
      "nfsgw-nsm 1\nstate\t1\nhost\ta\tb\tc\nend\t1\nextra\n",
  };
  for (const std::string& text : cases) {
    write_all(p, text);
    auto l = f.load();
    EXPECT_FALSE(l.ok) << text;
    EXPECT_NE(l.error.find(p.string()), std::string::npos) << l.error;
  }
  write_all(p, "nfsgw-nsm 1\nstate\t1\nhost\t" + std::string(1024, 'n') + "\tb\tc\nend\t1\n");
  EXPECT_TRUE(f.load().ok);  // at the bound
}

TEST(NlmNsmRecord, StartRunOverAnUnreadableRecordStartsAfreshAndSaysWhat) {
  TempDir d;
  const fs::path p = d.path() / "nsm";
  write_all(p, "nfsgw-nsm 1\nstate\t41\nhost\ta\tb");  // cut short
  NsmRecordFile f(p);
  auto l = f.start_run();
  EXPECT_TRUE(l.ok);
  EXPECT_NE(l.error.find("dropped"), std::string::npos) << l.error;
  EXPECT_EQ(l.record.state, 1);
  EXPECT_TRUE(l.record.hosts.empty());
  EXPECT_EQ(f.load().record, l.record);  // the bad file was replaced
}

TEST(NlmNsmRecord, HostsThatCannotBeWrittenAreRefusedAndTheFileKept) {
  TempDir d;
  NsmRecordFile f(d.path() / "nsm");
  ASSERT_EQ(f.save(two_hosts()), "");
  for (MonitoredHost bad : {MonitoredHost{"", "a", "b"}, MonitoredHost{"x\ty", "a", "b"},
                            MonitoredHost{"x", "a\nb", "c"}, MonitoredHost{"x", "a", std::string("b\0c", 3)},
                            MonitoredHost{std::string(1025, 'x'), "a", "b"}}) {
    EXPECT_NE(invalid_host(bad), "");
    NsmRecord r = two_hosts();
    r.state = 11;
    r.hosts.push_back(bad);
    EXPECT_NE(f.save(r), "");
    EXPECT_EQ(f.load().record, two_hosts());
  }
}

TEST(NlmNsmRecord, SaveIntoAFolderThatIsGoneFailsAndSaysWhere) {
  TempDir d;
  NsmRecordFile f(d.path() / "gone" / "nsm");
  const std::string e = f.save(two_hosts());
  EXPECT_NE(e.find("gone"), std::string::npos) << e;
  auto l = f.start_run();
  EXPECT_FALSE(l.ok);
}

}  // namespace
}  // namespace nfsgw::nlm::nlm_nsm_record_test
