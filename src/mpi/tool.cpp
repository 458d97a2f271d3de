// The MPI tool information interface (MPI-3.1 §14.3) over Sluice's own data:
//   control variables     = the configuration keys (core/config.hpp): SLUICE_<KEY>, typed as
//                           the key is, the value the engine runs with (or, before MPI_Init,
//                           the one it will start with); writable where the engine can change
//                           the setting while it runs (kWritable), else MPI_T_ERR_CVAR_SET_NEVER;
//   performance variables = the statistics registry's counters (util/stats.hpp), as they
//                           appear (at MPI_Init); their last values stay readable after
//                           MPI_Finalize;
//   categories            = the components both belong to ("core", "p2p", "shm", ...), with a
//                           sub-category per dotted counter group ("p2p.eager").
// Indices never change and nothing is removed, so a tool may cache them. MPI_T calls return
// their codes and never call an error handler (MPI-3.1 §14.3.10).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "mpi/big_lock.hpp"
#include "mpi/mpi_internal.hpp"
#include "util/log.hpp"

struct sluice_t_enum_s {
  std::string name;
  std::vector<std::string> items;  // item i has value i
};
struct sluice_t_cvar_handle_s {
  int index = 0;
  int count = 1;
};
struct sluice_t_pvar_session_s;
struct sluice_t_pvar_handle_s {
  sluice_t_pvar_session_s* session = nullptr;
  int index = 0;
  // Counters: the handle's own view, started and stopped (and reset or written) without
  // touching the registry's counter. Value = accum (+ raw - base while started).
  bool started = false;
  uint64_t accum = 0;
  uint64_t base = 0;
};
struct sluice_t_pvar_session_s {
  std::vector<std::unique_ptr<sluice_t_pvar_handle_s>> handles;
};

namespace sluice::mpi {
namespace {

using detail::Config;
using util::ConfigKey;
using util::ConfigType;

// The keys the engine can change while it runs (and that a write before MPI_Init sets for
// MPI_Init). Every other key is read once at start-up: the drivers, protocols and thresholds
// are built from it.
enum class Live : uint8_t { none, log_level, spin_time, backoff_max };
Live live_kind(std::string_view key) {
  if (key == "LOG_LEVEL") return Live::log_level;
  if (key == "SPIN_TIME") return Live::spin_time;
  if (key == "BACKOFF_MAX") return Live::backoff_max;
  return Live::none;
}

struct Cvar {
  std::string name;  // "SLUICE_EAGER_LIMIT"
  ConfigKey key;
  std::string desc;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  std::unique_ptr<sluice_t_enum_s> enumtype;  // choice keys
  int verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
  Live live = Live::none;
};

struct Pvar {
  std::string name;  // the registry's full name, "p2p.eager.messages_sent"
  std::string desc;
  util::Kind kind = util::Kind::counter;
  uint64_t last = 0;  // the latest value read (what reads give once the engine is gone)
  int var_class() const {
    switch (kind) {
      case util::Kind::level:
        return MPI_T_PVAR_CLASS_LEVEL;
      case util::Kind::high_water:
        return MPI_T_PVAR_CLASS_HIGHWATERMARK;
      case util::Kind::counter:
        break;
    }
    return MPI_T_PVAR_CLASS_COUNTER;
  }
  // Levels and high-water marks are the registry's values themselves: always "running",
  // read-only. Counters are per-handle views: started, stopped, reset, written.
  bool continuous() const { return kind != util::Kind::counter; }
};

struct Category {
  std::string name, desc;
  std::vector<int> cvars, pvars, categories;
};

struct Tool {
  std::mutex mu;
  int init_count = 0;
  bool built = false;
  std::vector<Cvar> cvars;
  std::vector<Pvar> pvars;
  std::unordered_map<std::string, int> pvar_index;
  std::vector<Category> cats;
  std::unordered_map<std::string, int> cat_index;
  std::vector<std::pair<std::string, std::string>> group_titles;  // config component -> title
  int stamp = 0;  // MPI_T_category_changed: bumped whenever something is added
  // The configuration values in force: from the environment until MPI_Init, then the engine's.
  Config config;
  // The live keys' values when no engine runs: written before MPI_Init (applied by it), or
  // what was in force at MPI_Finalize.
  std::optional<int> log_level;
  std::optional<double> spin_s, backoff_s;
  std::unordered_set<sluice_t_cvar_handle_s*> cvar_handles;
  std::unordered_set<sluice_t_pvar_session_s*> sessions;
};

Tool& tool() {
  static Tool* t = new Tool;  // never destroyed: tools may call MPI_T from atexit handlers
  return *t;
}

// The engine while it runs (between MPI_Init and the end of MPI_Finalize).
detail::Engine* live_engine() {
  return detail::current_engine();
}

// A string result (MPI-3.1 §14.3.3): nothing without a length; the length needed when it is
// 0 or there is no buffer; else at most *len - 1 characters and the terminator.
void put_string(const std::string& s, char* out, int* len) {
  if (!len) return;
  if (*len <= 0 || !out) {
    *len = static_cast<int>(s.size()) + 1;
    return;
  }
  const std::size_t n = std::min(s.size(), static_cast<std::size_t>(*len - 1));
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
  *len = static_cast<int>(n) + 1;
}

std::vector<std::string> split_choices(std::string_view choices) {
  std::vector<std::string> out;
  while (true) {
    const std::size_t bar = choices.find('|');
    out.emplace_back(choices.substr(0, bar));
    if (bar == std::string_view::npos) break;
    choices.remove_prefix(bar + 1);
  }
  return out;
}

int add_category(Tool& t, const std::string& name, const std::string& desc, int parent) {
  if (auto it = t.cat_index.find(name); it != t.cat_index.end()) return it->second;
  const int index = static_cast<int>(t.cats.size());
  t.cats.push_back({name, desc, {}, {}, {}});
  t.cat_index.emplace(name, index);
  if (parent >= 0) t.cats[parent].categories.push_back(index);
  ++t.stamp;
  return index;
}

std::string component_title(const Tool& t, const std::string& component) {
  for (const auto& [c, title] : t.group_titles)
    if (c == component) return title;
  return "the " + component + " component's statistics";
}

void build_cvars(Tool& t) {
  bool first_group = true;
  for (const util::ConfigGroup& g : detail::config_groups()) {
    const std::string component(g.component);
    t.group_titles.emplace_back(component, std::string(g.title));
    const int cat = add_category(t, component, std::string(g.title), -1);
    for (const ConfigKey& k : g.keys) {
      Cvar v;
      v.name = "SLUICE_" + std::string(k.name);
      v.key = k;
      v.live = live_kind(k.name);
      v.verbosity = first_group ? MPI_T_VERBOSITY_USER_BASIC : MPI_T_VERBOSITY_TUNER_BASIC;
      std::string unit;
      switch (k.type) {
        case ConfigType::boolean:
          v.type = MPI_INT;
          unit = " (0 or 1)";
          break;
        case ConfigType::integer: {
          detail::NumericRange r;
          const bool fits = detail::numeric_range(k, r) &&
                            r.min >= std::numeric_limits<int>::min() &&
                            r.max <= std::numeric_limits<int>::max();
          v.type = fits ? MPI_INT : MPI_COUNT;
          break;
        }
        case ConfigType::size:
          v.type = MPI_UNSIGNED_LONG_LONG;
          unit = " (bytes)";
          break;
        case ConfigType::duration:
          v.type = MPI_DOUBLE;
          unit = " (seconds)";
          break;
        case ConfigType::string:
          v.type = MPI_CHAR;
          break;
        case ConfigType::choice:
          v.type = MPI_INT;
          v.enumtype = std::make_unique<sluice_t_enum_s>();
          v.enumtype->name = v.name;
          v.enumtype->items = split_choices(k.choices);
          unit = " (an enumeration: " + std::string(k.choices) + ")";
          break;
      }
      v.desc = std::string(k.help) + unit + "; default " +
               (k.default_value.empty() ? std::string("empty") : std::string(k.default_value));
      if (const std::string range = detail::range_text(k, true); !range.empty())
        v.desc += ", range " + range;
      v.desc += v.live != Live::none ? "; writable at run time"
                                     : "; read at start-up (set it in the environment)";
      t.cats[cat].cvars.push_back(static_cast<int>(t.cvars.size()));
      t.cvars.push_back(std::move(v));
    }
    first_group = false;
  }
}

// Adds the registry's counters not listed yet (the engine registers them at MPI_Init).
void refresh_pvars(Tool& t) {
  detail::Engine* e = live_engine();
  if (!e) return;
  for (util::StatsRegistry::Description& d : e->stats_registry().describe()) {
    if (t.pvar_index.contains(d.name)) continue;
    int cat = add_category(t, d.component, component_title(t, d.component), -1);
    // One sub-category per dotted group below the component: "p2p.eager" for
    // "p2p.eager.messages_sent".
    for (std::size_t dot = d.name.find('.', d.component.size() + 1); dot != std::string::npos;
         dot = d.name.find('.', dot + 1)) {
      const std::string group = d.name.substr(0, dot);
      cat = add_category(t, group, "the " + group + " counters", cat);
    }
    Pvar p;
    p.name = d.name;
    p.kind = d.kind;
    p.desc = d.help;
    if (d.unit != util::Unit::count) p.desc += " (" + std::string(util::unit_symbol(d.unit)) + ")";
    const int index = static_cast<int>(t.pvars.size());
    t.cats[cat].pvars.push_back(index);
    t.pvar_index.emplace(d.name, index);
    t.pvars.push_back(std::move(p));
    ++t.stamp;
  }
}

// The counter's value now, or the last one seen once its component (or the engine) is gone.
uint64_t raw_value(Pvar& p) {
  if (detail::Engine* e = live_engine())
    if (const std::optional<uint64_t> v = e->stats_registry().value(p.name)) p.last = *v;
  return p.last;
}

// ---- control variable values ---------------------------------------------------------

int choice_index(const Cvar& v, const std::string& text) {
  const auto& items = v.enumtype->items;
  const auto it = std::find(items.begin(), items.end(), text);
  return it == items.end() ? 0 : static_cast<int>(it - items.begin());
}

// A live key's value in force: the engine's while it runs, else what was written or left at
// MPI_Finalize, else the configuration.
double live_seconds(Tool& t, const Cvar& v) {
  if (detail::Engine* e = live_engine())
    return static_cast<double>(v.live == Live::spin_time ? e->spin_ns() : e->max_sleep_ns()) / 1e9;
  const std::optional<double>& set = v.live == Live::spin_time ? t.spin_s : t.backoff_s;
  return set ? *set : t.config.get_seconds(v.key.name);
}
int live_log_level(Tool& t, const Cvar& v) {
  if (live_engine()) return static_cast<int>(util::log_state().level);
  return t.log_level ? *t.log_level : choice_index(v, t.config.get_string(v.key.name));
}

const Config& config_in_force(Tool& t) {
  if (detail::Engine* e = live_engine()) return e->config();
  return t.config;
}

int read_cvar(Tool& t, const Cvar& v, int count, void* buf) {
  const Config& c = config_in_force(t);
  switch (v.key.type) {
    case ConfigType::boolean:
      *static_cast<int*>(buf) = c.get_bool(v.key.name) ? 1 : 0;
      break;
    case ConfigType::integer:
      if (v.type == MPI_INT)
        *static_cast<int*>(buf) = static_cast<int>(c.get_int(v.key.name));
      else
        *static_cast<MPI_Count*>(buf) = c.get_int(v.key.name);
      break;
    case ConfigType::size:
      *static_cast<unsigned long long*>(buf) = c.get_size(v.key.name);
      break;
    case ConfigType::duration:
      *static_cast<double*>(buf) =
          v.live != Live::none ? live_seconds(t, v) : c.get_seconds(v.key.name);
      break;
    case ConfigType::string: {
      const std::string s = c.get_string(v.key.name);
      const std::size_t n = std::min(s.size(), static_cast<std::size_t>(count - 1));
      std::memcpy(buf, s.data(), n);
      static_cast<char*>(buf)[n] = '\0';
      break;
    }
    case ConfigType::choice:
      *static_cast<int*>(buf) = v.live == Live::log_level
                                    ? live_log_level(t, v)
                                    : choice_index(v, c.get_string(v.key.name));
      break;
  }
  return MPI_SUCCESS;
}

// Applies the live keys' values to the engine.
void apply_live(Tool& t, detail::Engine& e) {
  if (t.log_level) util::log_state().level = static_cast<util::LogLevel>(*t.log_level);
  const auto ns = [](double s) { return static_cast<uint64_t>(std::llround(s * 1e9)); };
  if (t.spin_s || t.backoff_s)
    e.set_wait_times(t.spin_s ? ns(*t.spin_s) : e.spin_ns(),
                     t.backoff_s ? ns(*t.backoff_s) : e.max_sleep_ns());
  t.log_level.reset();
  t.spin_s.reset();
  t.backoff_s.reset();
}

int write_cvar(Tool& t, const Cvar& v, const void* buf) {
  if (v.live == Live::none) return MPI_T_ERR_CVAR_SET_NEVER;
  if (!buf) return MPI_T_ERR_INVALID;
  if (g_finalized && !live_engine()) return MPI_T_ERR_CVAR_SET_NOT_NOW;
  if (v.live == Live::log_level) {
    const int level = *static_cast<const int*>(buf);
    if (level < 0 || level >= static_cast<int>(v.enumtype->items.size())) return MPI_T_ERR_INVALID;
    t.log_level = level;
  } else {
    const double s = *static_cast<const double*>(buf);
    detail::NumericRange r;
    detail::numeric_range(v.key, r);  // nanoseconds
    if (!std::isfinite(s) || s * 1e9 < static_cast<double>(r.min) - 0.5 ||
        s * 1e9 > static_cast<double>(r.max) + 0.5)
      return MPI_T_ERR_INVALID;
    (v.live == Live::spin_time ? t.spin_s : t.backoff_s) = s;
  }
  if (detail::Engine* e = live_engine()) apply_live(t, *e);  // else MPI_Init applies it
  return MPI_SUCCESS;
}

// ---- the calls' common part ------------------------------------------------------------

// Serializes MPI_T calls among themselves and, between MPI_Init and MPI_Finalize, with the
// other MPI calls (the same lock order as an MPI call: the big lock, then the tool's).
class ToolCall {
 public:
  ToolCall() {
    if (g_initialized) mpi_.emplace();
    lock_ = std::unique_lock(tool().mu);
  }
  Tool& t() { return tool(); }
  bool ready() const { return tool().init_count > 0; }

 private:
  std::optional<CallGuard> mpi_;
  std::unique_lock<std::mutex> lock_;
};

#define SLUICE_T_CALL                                  \
  ToolCall call;                                       \
  if (!call.ready()) return MPI_T_ERR_NOT_INITIALIZED; \
  Tool& t = call.t()

bool valid_session(Tool& t, MPI_T_pvar_session s) {
  return s && t.sessions.contains(s);
}
// One of the session's handles (looked up, not dereferenced: a freed handle is no error).
bool valid_handle(MPI_T_pvar_session s, MPI_T_pvar_handle h) {
  return std::any_of(s->handles.begin(), s->handles.end(),
                     [h](const auto& mine) { return mine.get() == h; });
}

uint64_t handle_value(Tool& t, sluice_t_pvar_handle_s& h) {
  Pvar& p = t.pvars[h.index];
  const uint64_t raw = raw_value(p);
  if (p.continuous()) return raw;
  return h.started ? h.accum + (raw - h.base) : h.accum;
}

void start(Tool& t, sluice_t_pvar_handle_s& h) {
  if (h.started) return;
  h.base = raw_value(t.pvars[h.index]);
  h.started = true;
}
void stop(Tool& t, sluice_t_pvar_handle_s& h) {
  if (!h.started) return;
  h.accum += raw_value(t.pvars[h.index]) - h.base;
  h.started = false;
}
void set_value(Tool& t, sluice_t_pvar_handle_s& h, uint64_t value) {
  h.accum = value;
  h.base = raw_value(t.pvars[h.index]);
}

void free_all(Tool& t) {
  for (sluice_t_cvar_handle_s* h : t.cvar_handles) delete h;
  t.cvar_handles.clear();
  for (sluice_t_pvar_session_s* s : t.sessions) delete s;
  t.sessions.clear();
}

int category_list(int cat_index, int len, int indices[], std::vector<int> Category::*member) {
  SLUICE_T_CALL;
  refresh_pvars(t);
  if (cat_index < 0 || cat_index >= static_cast<int>(t.cats.size())) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && !indices)) return MPI_T_ERR_INVALID;
  const std::vector<int>& list = t.cats[cat_index].*member;
  const std::size_t n = std::min(list.size(), static_cast<std::size_t>(len));
  std::copy_n(list.begin(), n, indices);
  return MPI_SUCCESS;
}

}  // namespace

// MPI_Init, once the engine runs: the configuration it runs with, the values written
// before, and its counters.
void tool_engine_started() {
  Tool& t = tool();
  std::lock_guard lock(t.mu);
  detail::Engine* e = live_engine();
  if (!e) return;
  t.config = e->config();
  apply_live(t, *e);
  if (t.built) refresh_pvars(t);
}

// MPI_Finalize, before the engine goes: every counter's final value and the live keys' values
// stay readable.
void tool_engine_ending() {
  Tool& t = tool();
  std::lock_guard lock(t.mu);
  detail::Engine* e = live_engine();
  if (!e) return;
  if (!t.built) {
    build_cvars(t);
    t.built = true;
  }
  refresh_pvars(t);
  for (Pvar& p : t.pvars) raw_value(p);
  t.log_level = static_cast<int>(util::log_state().level);
  t.spin_s = static_cast<double>(e->spin_ns()) / 1e9;
  t.backoff_s = static_cast<double>(e->max_sleep_ns()) / 1e9;
}

}  // namespace sluice::mpi

using namespace sluice::mpi;

extern "C" {

int PMPI_T_init_thread(int required, int* provided) {
  ToolCall call;
  Tool& t = call.t();
  if (!t.built) {
    std::vector<std::string> warnings, errors;  // the engine reports them at MPI_Init
    if (!live_engine()) t.config = Config::from_environment(warnings, errors);
    build_cvars(t);
    t.built = true;
  }
  if (sluice::detail::Engine* e = live_engine()) t.config = e->config();
  refresh_pvars(t);
  ++t.init_count;
  // Every MPI_T call takes the tool's lock (and the MPI lock under MPI_THREAD_MULTIPLE).
  if (provided) *provided = std::clamp(required, int{MPI_THREAD_SINGLE}, int{MPI_THREAD_MULTIPLE});
  return MPI_SUCCESS;
}

int PMPI_T_finalize(void) {
  SLUICE_T_CALL;
  if (--t.init_count == 0) free_all(t);
  return MPI_SUCCESS;
}

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int* num, char* name, int* name_len) {
  SLUICE_T_CALL;
  if (!enumtype) return MPI_T_ERR_INVALID_HANDLE;
  if (num) *num = static_cast<int>(enumtype->items.size());
  put_string(enumtype->name, name, name_len);
  (void)t;
  return MPI_SUCCESS;
}

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int* value, char* name, int* name_len) {
  SLUICE_T_CALL;
  (void)t;
  if (!enumtype) return MPI_T_ERR_INVALID_HANDLE;
  if (index < 0 || index >= static_cast<int>(enumtype->items.size())) return MPI_T_ERR_INVALID_ITEM;
  if (value) *value = index;
  put_string(enumtype->items[index], name, name_len);
  return MPI_SUCCESS;
}

int PMPI_T_cvar_get_num(int* num_cvar) {
  SLUICE_T_CALL;
  if (!num_cvar) return MPI_T_ERR_INVALID;
  *num_cvar = static_cast<int>(t.cvars.size());
  return MPI_SUCCESS;
}

int PMPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* scope) {
  SLUICE_T_CALL;
  if (cvar_index < 0 || cvar_index >= static_cast<int>(t.cvars.size()))
    return MPI_T_ERR_INVALID_INDEX;
  const Cvar& v = t.cvars[cvar_index];
  put_string(v.name, name, name_len);
  if (verbosity) *verbosity = v.verbosity;
  if (datatype) *datatype = v.type;
  if (enumtype) *enumtype = v.enumtype ? v.enumtype.get() : MPI_T_ENUM_NULL;
  put_string(v.desc, desc, desc_len);
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  // A key read at start-up keeps its value for the whole run; the live ones are per process.
  if (scope) *scope = v.live != Live::none ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_CONSTANT;
  return MPI_SUCCESS;
}

int PMPI_T_cvar_get_index(const char* name, int* cvar_index) {
  SLUICE_T_CALL;
  if (!name || !cvar_index) return MPI_T_ERR_INVALID;
  for (std::size_t i = 0; i < t.cvars.size(); ++i)
    if (t.cvars[i].name == name) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  return MPI_T_ERR_INVALID_NAME;
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void* obj_handle, MPI_T_cvar_handle* handle,
                             int* count) {
  SLUICE_T_CALL;
  (void)obj_handle;  // every variable is bound to no object
  if (cvar_index < 0 || cvar_index >= static_cast<int>(t.cvars.size()))
    return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  const Cvar& v = t.cvars[cvar_index];
  auto h = std::make_unique<sluice_t_cvar_handle_s>();
  h->index = cvar_index;
  // A string: its length in force now (string keys are not writable) and the terminator.
  h->count = v.key.type == ConfigType::string
                 ? static_cast<int>(config_in_force(t).get_string(v.key.name).size()) + 1
                 : 1;
  *count = h->count;
  *handle = h.get();
  t.cvar_handles.insert(h.release());
  return MPI_SUCCESS;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  SLUICE_T_CALL;
  if (!handle || !t.cvar_handles.erase(*handle)) return MPI_T_ERR_INVALID_HANDLE;
  delete *handle;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  SLUICE_T_CALL;
  if (!handle || !t.cvar_handles.contains(handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  return read_cvar(t, t.cvars[handle->index], handle->count, buf);
}

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void* buf) {
  SLUICE_T_CALL;
  if (!handle || !t.cvar_handles.contains(handle)) return MPI_T_ERR_INVALID_HANDLE;
  return write_cvar(t, t.cvars[handle->index], buf);
}

int PMPI_T_pvar_get_num(int* num_pvar) {
  SLUICE_T_CALL;
  if (!num_pvar) return MPI_T_ERR_INVALID;
  refresh_pvars(t);
  *num_pvar = static_cast<int>(t.pvars.size());
  return MPI_SUCCESS;
}

int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                         MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                         int* bind, int* readonly, int* continuous, int* atomic) {
  SLUICE_T_CALL;
  refresh_pvars(t);
  if (pvar_index < 0 || pvar_index >= static_cast<int>(t.pvars.size()))
    return MPI_T_ERR_INVALID_INDEX;
  const Pvar& p = t.pvars[pvar_index];
  put_string(p.name, name, name_len);
  if (verbosity) *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
  if (var_class) *var_class = p.var_class();
  if (datatype) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype) *enumtype = MPI_T_ENUM_NULL;
  put_string(p.desc, desc, desc_len);
  if (bind) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly) *readonly = p.continuous() ? 1 : 0;
  if (continuous) *continuous = p.continuous() ? 1 : 0;
  // A counter handle's read-and-reset happens under the tool's lock, from one raw reading.
  if (atomic) *atomic = p.continuous() ? 0 : 1;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  SLUICE_T_CALL;
  if (!name || !pvar_index) return MPI_T_ERR_INVALID;
  refresh_pvars(t);
  const auto it = t.pvar_index.find(name);
  if (it == t.pvar_index.end() || t.pvars[it->second].var_class() != var_class)
    return MPI_T_ERR_INVALID_NAME;
  *pvar_index = it->second;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  SLUICE_T_CALL;
  if (!session) return MPI_T_ERR_INVALID;
  *session = new sluice_t_pvar_session_s;
  t.sessions.insert(*session);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  SLUICE_T_CALL;
  if (!session || !valid_session(t, *session)) return MPI_T_ERR_INVALID_SESSION;
  t.sessions.erase(*session);
  delete *session;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* obj_handle,
                             MPI_T_pvar_handle* handle, int* count) {
  SLUICE_T_CALL;
  (void)obj_handle;  // every variable is bound to no object
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  refresh_pvars(t);
  if (pvar_index < 0 || pvar_index >= static_cast<int>(t.pvars.size()))
    return MPI_T_ERR_INVALID_INDEX;
  if (!handle || !count) return MPI_T_ERR_INVALID;
  auto h = std::make_unique<sluice_t_pvar_handle_s>();
  h->session = session;
  h->index = pvar_index;
  *handle = h.get();
  *count = 1;
  session->handles.push_back(std::move(h));
  return MPI_SUCCESS;
}

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  SLUICE_T_CALL;
  (void)t;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (!handle || !valid_handle(session, *handle)) return MPI_T_ERR_INVALID_HANDLE;
  std::erase_if(session->handles, [&](const auto& h) { return h.get() == *handle; });
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (auto& h : session->handles)
      if (!t.pvars[h->index].continuous()) start(t, *h);
    return MPI_SUCCESS;
  }
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (t.pvars[handle->index].continuous()) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  start(t, *handle);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (auto& h : session->handles)
      if (!t.pvars[h->index].continuous()) stop(t, *h);
    return MPI_SUCCESS;
  }
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (t.pvars[handle->index].continuous()) return MPI_T_ERR_PVAR_NO_STARTSTOP;
  stop(t, *handle);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (!buf) return MPI_T_ERR_INVALID;
  *static_cast<unsigned long long*>(buf) = handle_value(t, *handle);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* buf) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (t.pvars[handle->index].continuous()) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_T_ERR_INVALID;
  set_value(t, *handle, *static_cast<const unsigned long long*>(buf));
  return MPI_SUCCESS;
}

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    for (auto& h : session->handles)
      if (!t.pvars[h->index].continuous()) set_value(t, *h, 0);
    return MPI_SUCCESS;
  }
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (t.pvars[handle->index].continuous()) return MPI_T_ERR_PVAR_NO_WRITE;
  set_value(t, *handle, 0);
  return MPI_SUCCESS;
}

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  SLUICE_T_CALL;
  if (!valid_session(t, session)) return MPI_T_ERR_INVALID_SESSION;
  if (!valid_handle(session, handle)) return MPI_T_ERR_INVALID_HANDLE;
  if (t.pvars[handle->index].continuous()) return MPI_T_ERR_PVAR_NO_WRITE;
  if (!buf) return MPI_T_ERR_INVALID;
  // One raw reading for both: nothing counted in between is lost.
  const uint64_t raw = raw_value(t.pvars[handle->index]);
  *static_cast<unsigned long long*>(buf) =
      handle->started ? handle->accum + (raw - handle->base) : handle->accum;
  handle->accum = 0;
  handle->base = raw;
  return MPI_SUCCESS;
}

int PMPI_T_category_get_num(int* num_cat) {
  SLUICE_T_CALL;
  if (!num_cat) return MPI_T_ERR_INVALID;
  refresh_pvars(t);
  *num_cat = static_cast<int>(t.cats.size());
  return MPI_SUCCESS;
}

int PMPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                             int* num_cvars, int* num_pvars, int* num_categories) {
  SLUICE_T_CALL;
  refresh_pvars(t);
  if (cat_index < 0 || cat_index >= static_cast<int>(t.cats.size())) return MPI_T_ERR_INVALID_INDEX;
  const Category& c = t.cats[cat_index];
  put_string(c.name, name, name_len);
  put_string(c.desc, desc, desc_len);
  if (num_cvars) *num_cvars = static_cast<int>(c.cvars.size());
  if (num_pvars) *num_pvars = static_cast<int>(c.pvars.size());
  if (num_categories) *num_categories = static_cast<int>(c.categories.size());
  return MPI_SUCCESS;
}

int PMPI_T_category_get_index(const char* name, int* cat_index) {
  SLUICE_T_CALL;
  if (!name || !cat_index) return MPI_T_ERR_INVALID;
  refresh_pvars(t);
  const auto it = t.cat_index.find(name);
  if (it == t.cat_index.end()) return MPI_T_ERR_INVALID_NAME;
  *cat_index = it->second;
  return MPI_SUCCESS;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return category_list(cat_index, len, indices, &Category::cvars);
}

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return category_list(cat_index, len, indices, &Category::pvars);
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[]) {
  return category_list(cat_index, len, indices, &Category::categories);
}

int PMPI_T_category_changed(int* stamp) {
  SLUICE_T_CALL;
  if (!stamp) return MPI_T_ERR_INVALID;
  refresh_pvars(t);
  *stamp = t.stamp;
  return MPI_SUCCESS;
}

}  // extern "C"

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
#pragma weak MPI_T_finalize = PMPI_T_finalize
#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
#pragma weak MPI_T_category_changed = PMPI_T_category_changed
