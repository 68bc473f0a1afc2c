// The keys of an [[export]]. Who may do what (access, clients, squash, ids) and
// the metadata cache's windows apply at once on reload; what the export's stack is
// built from (its origin, connections, caches) needs a restart; `path` names the
// export, so a changed path is another export.
#include <algorithm>
#include <cctype>

#include "cache/coherency.h"
#include "config/key_kinds.h"

namespace nfsgw::config {
namespace {

using ExportKinds = Kinds<ExportConfig>;

/// 32-bit FNV-1a: tiny, fixed forever (ids are baked into clients' handles), and
/// good enough to spread export paths; collisions are detected and refused.
std::uint32_t fnv1a32(const std::string& s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) {
    h ^= c;
    h *= 16777619u;
  }
  return h;
}

/// The origin server a URL names, as the key of its cache space: the host as
/// written (lower case) and its NFS port (0: found through rpcbind). Two spellings
/// of one server (a name and its address) get two spaces, which is only a cache
/// that is shared less; it never shares records between two servers.
std::string origin_server(const OriginUrl& u) {
  std::string host = u.host;
  std::transform(host.begin(), host.end(), host.begin(), [](unsigned char c) { return std::tolower(c); });
  return "origin " + host + ":" + std::to_string(u.nfs_port);
}

/// What clients mount: absolute, one spelling per directory (no "", "." or ".."
/// components, no trailing '/'), so duplicates and ids are well defined.
void check_export_path(const Input& in, const std::string& p) {
  const std::string allowed =
      "; allowed: an absolute path such as \"/data\" without \".\", \"..\", \"//\" or a trailing \"/\"";
  if (p.empty() || p[0] != '/') in.fail(quote(p) + " is not absolute" + allowed);
  if (p.size() > 1024) in.fail("the path is longer than 1024 bytes (MNTPATHLEN)");
  if (p.find('\0') != std::string::npos) in.fail(quote(p) + " contains a NUL character" + allowed);
  if (p == "/") return;
  if (p.back() == '/') in.fail(quote(p) + " ends with \"/\"" + allowed);
  std::size_t pos = 1;
  while (pos <= p.size()) {
    auto next = p.find('/', pos);
    if (next == std::string::npos) next = p.size();
    const std::string comp = p.substr(pos, next - pos);
    if (comp.empty()) in.fail(quote(p) + " contains \"//\"" + allowed);
    if (comp == "..") in.fail(quote(p) + " contains \"..\"" + allowed);
    if (comp == ".") in.fail(quote(p) + " contains \".\"" + allowed);
    pos = next + 1;
  }
}

Key<ExportConfig> path_key() {
  Key<ExportConfig> k = ExportKinds::text("path", &ExportConfig::path,
                                "absolute, at most 1024 bytes, no `.` or `..` components, no `//`, no trailing "
                                "`/` (except `\"/\"` itself); unique among exports",
                                "what clients mount (`mount gw:/projects /mnt`)", check_export_path);
  k.reload = Reload::Identity;
  k.absent = [](const Input& in, ExportConfig&) {
    in.fail("missing; every export needs the path clients mount, e.g. path = \"/data\"");
  };
  return std::move(k).defaults_to("(required)");
}

Key<ExportConfig> origin_key() {
  Key<ExportConfig> k = ExportKinds::plain(
      "origin", "string", "`nfs://host[:port]/path[?nfsport=N&mountport=M]`",
      "the origin NFSv3 server and its export, see below", &ExportConfig::origin,
      [](const Input& in) {
        const std::string& text = in.string();
        try {
          return OriginUrl::parse(text);
        } catch (const ConfigError& e) {
          in.fail(e.what());
        }
      },
      [](const OriginUrl& u) { return quote(u.text); });
  k.absent = [](const Input& in, ExportConfig&) {
    in.fail("missing; every export needs an origin such as \"nfs://server/export\"");
  };
  // The cache space is derived from the origin: it goes where the origin goes.
  k.copy = [](const ExportConfig& from, ExportConfig& to) {
    to.origin = from.origin;
    to.cache_space = from.cache_space;
  };
  return std::move(k).defaults_to("(required)");
}

std::vector<Cidr> everyone() { return {Cidr::parse("0.0.0.0/0"), Cidr::parse("::/0")}; }

Key<ExportConfig> clients_key() {
  Key<ExportConfig> k = ExportKinds::plain(
      "clients", "array of strings", "one or more networks in CIDR notation, or bare addresses",
      "who may mount and use the export; others get `NFS3ERR_ACCES` / `MNT3ERR_ACCES`. An empty array is an "
      "error (it would admit nobody)",
      &ExportConfig::clients,
      [](const Input& in) {
        const std::size_t n = in.array_size("an array of networks such as [\"10.0.0.0/8\"]");
        if (n == 0) {
          in.fail("the empty array lets no client in; allowed: one or more networks (leave the key out for "
                  "everyone)");
        }
        std::vector<Cidr> out;
        for (std::size_t i = 0; i < n; ++i) {
          const Input item = in.item(i);
          const std::string& text = item.string("a network string such as \"10.0.0.0/8\"");
          try {
            out.push_back(Cidr::parse(text));
          } catch (const ConfigError& e) {
            item.fail(e.what());
          }
        }
        return out;
      },
      [](const std::vector<Cidr>& clients) {
        std::string out = "[";
        for (const auto& c : clients) out += (out.size() > 1 ? ", " : "") + quote(c.text);
        return out + "]";
      });
  k.absent = [](const Input&, ExportConfig& e) { e.clients = everyone(); };
  return std::move(k).at_once().defaults_to("everyone (`[\"0.0.0.0/0\", \"::/0\"]`)");
}

/// The values derived from keys: the id clients' handles carry, the cache space.
void derive_ids(const Input& in, ExportConfig& e) {
  if (e.writes == Writes::Back && !e.coherency.enabled)
    in.fail("writes = \"back\" needs metadata_cache = true (the write-back layer asks it for the writer's "
            "permission and the file's attributes)");
  if (e.writes == Writes::Back && e.access == Access::ReadOnly)
    in.fail("writes = \"back\" on an export with access = \"ro\": nothing would be written");
  e.id = fnv1a32(e.path);
  e.cache_space = fnv1a32(origin_server(e.origin));
}

std::vector<Key<ExportConfig>> all_keys() {
  std::vector<Key<ExportConfig>> keys{
      path_key(),
      origin_key(),
      ExportKinds::enumeration("access", &ExportConfig::access, {{"rw", Access::ReadWrite}, {"ro", Access::ReadOnly}},
                     "an access mode", "`\"ro\"` refuses every modifying call with `NFS3ERR_ROFS`")
          .at_once(),
      clients_key(),
      ExportKinds::enumeration("squash", &ExportConfig::squash,
                     {{"none", Squash::None}, {"root", Squash::Root}, {"all", Squash::All}}, "a squash mode",
                     "which callers act as `anon_uid`/`anon_gid` on the origin: `\"none\"` nobody; `\"root\"` "
                     "uid 0 becomes `anon_uid` and gid 0 (primary or supplementary) becomes `anon_gid`; "
                     "`\"all\"` everyone. Callers with AUTH_NONE are always anonymous")
          .at_once(),
      ExportKinds::integer("anon_uid", &ExportConfig::anon_uid, 0, 4294967295LL,
                 "uid that squashed callers act as on the origin")
          .at_once(),
      ExportKinds::integer("anon_gid", &ExportConfig::anon_gid, 0, 4294967295LL,
                 "gid that squashed callers act as on the origin")
          .at_once(),
      ExportKinds::integer("warm_uid", &ExportConfig::warm_uid, 0, 4294967295LL,
                 "uid that `nfsgw warm` walks this export as, before `squash` (docs/operations.md, *Priming*). "
                 "The cache hands a cached LOOKUP, listing or ACCESS answer only to a caller whose permission "
                 "the origin confirmed for the same credential (after squash), so warm as the ids your clients "
                 "use — or set `squash = \"all\"`, or `access_check = \"local\"`")
          .at_once()
          .defaults_to("`anon_uid`"),
      ExportKinds::integer("warm_gid", &ExportConfig::warm_gid, 0, 4294967295LL,
                 "gid that `nfsgw warm` walks this export as, before `squash`")
          .at_once()
          .defaults_to("`anon_gid`"),
      ExportKinds::integer("origin_nlm_port", &ExportConfig::origin_nlm_port, 0, 65535,
                 "the origin's NLM v4 port, used when `[server] nlm_port` is set; `0` asks the origin's rpcbind"),
      ExportKinds::integer("origin_statd_port", &ExportConfig::origin_statd_port, 0, 65535,
                 "the origin's rpc.statd port (nfsgw tells it that nfsgw restarted); `0` asks the origin's "
                 "rpcbind"),
      ExportKinds::integer("upstream_connections", &ExportConfig::upstream_connections, 1, 64,
                 "TCP connections from the gateway to the origin for this export"),
      ExportKinds::duration("origin_timeout", &ExportConfig::origin_timeout, kMinOriginTimeout, kMaxOriginTimeout,
                  "how long a call to the origin may go unanswered, while nothing else comes back on its "
                  "connection either, before nfsgw declares the connection dead (a frozen origin: TCP open, no "
                  "replies), closes it and reconnects. Idempotent calls are then sent again (they wait, as on a "
                  "hard mount); non-idempotent ones (CREATE, REMOVE, RENAME, ...) are answered `NFS3ERR_JUKEBOX`, "
                  "and the client retries them after a pause. Also bounds one connection attempt (rpcbind "
                  "included) and sets the origin sockets' `TCP_USER_TIMEOUT` and keepalive (first probe after "
                  "half of it, three more over the other half). The default is a Linux client's `timeo` over "
                  "TCP; a shorter one notices a frozen origin sooner but cuts an origin that takes longer than "
                  "that to answer a single call while answering nothing else"),
      ExportKinds::boolean("metadata_cache", [](auto& e) -> auto& { return e.coherency.enabled; },
                 "keep this export's metadata (attributes, lookups, listings, link targets, ACCESS answers, file "
                 "system information) in the metadata cache; `false` forwards every call to the origin"),
      ExportKinds::boolean("data_cache", &ExportConfig::data_cache,
                 "keep this export's file data in the data cache (blocks on local disk, valid while the file's "
                 "cached attributes say it is unchanged); `false` forwards every READ to the origin"),
      ExportKinds::integer("readahead_kb", &ExportConfig::readahead_kb, 0, 262144,
                 "how far ahead of a sequential reader the data cache fetches, in KiB; `0` disables read-ahead")
          .also_allowed(" (256 MiB)"),
      ExportKinds::enumeration("writes", &ExportConfig::writes, {{"through", Writes::Through}, {"back", Writes::Back}},
                     "a write mode",
                     "`\"through\"`: a WRITE is answered by the origin. `\"back\"`: a WRITE is answered once it is "
                     "in nfsgw's dirty log (on local disk, synced as the client asked) and flushed to the origin "
                     "after `write_back_delay`; every export of the same origin sees the written data at once. "
                     "Needs `metadata_cache`; all writers of the files must go through this one nfsgw. "
                     "A reload from `\"back\"` to `\"through\"` flushes first; docs/operations.md, *Write-back*")
          .at_once(),
      ExportKinds::duration("write_back_delay", &ExportConfig::write_back_delay, std::chrono::milliseconds(0),
                  std::chrono::hours(24),
                  "with `writes = \"back\"`: how long written data may stay only in nfsgw before its flush to "
                  "the origin starts (sooner when `dirty_max_gb` fills, or on `nfsgw flush`)")
          .at_once(),
      ExportKinds::enumeration("consistency", [](auto& e) -> auto& { return e.coherency.consistency; },
                     {{"ttl", cache::Consistency::Ttl},
                      {"strict", cache::Consistency::Strict},
                      {"immutable", cache::Consistency::Immutable}},
                     "a consistency mode",
                     "how cached metadata is checked against the origin, see *Metadata cache and coherency* below")
          .at_once(),
      ExportKinds::enumeration("access_check", [](auto& e) -> auto& { return e.coherency.access_check; },
                     {{"origin", cache::AccessCheck::Origin}, {"local", cache::AccessCheck::Local}},
                     "an access check",
                     "how a cached lookup, listing or link target learns that the caller may see it, see below")
          .at_once(),
  };
  // The windows are declared beside the cache that keeps them, with their bounds.
  for (const auto& d : cache::kDurationSettings) {
    keys.push_back(
        ExportKinds::duration(d.key, [f = d.field](auto& e) -> auto& { return e.coherency.*f; }, d.min, d.max, d.meaning)
            .at_once());
  }
  return keys;
}

}  // namespace

const SectionKeys<ExportConfig>& export_keys() {
  static const SectionKeys<ExportConfig> keys{"export", all_keys(), derive_ids};
  return keys;
}

}  // namespace nfsgw::config
