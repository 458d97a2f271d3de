// The server half of the bootstrap (wire format: src/boot/boot_wire.hpp). It owns the
// listener (a Unix socket in a private directory, or TCP with --hosts), the ranks'
// connections, who may join (the job key, or a rank's one-time launch token), the
// key-value store with its fences, and the per-rank protocol state: joined, finalized,
// waiting in a fence, told of failures. What a rank's death means for the job is not its
// business: it asks the job (StoreServer::Job).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "boot/boot_wire.hpp"
#include "event_loop.hpp"
#include "options.hpp"
#include "posix.hpp"
#include "util/stats.hpp"

namespace sluicerun {

class StoreServer {
 public:
  // What the store needs from the job it serves.
  class Job {
   public:
    virtual std::string who(int rank) const = 0;  // "rank 3 (pid 1234)"
    virtual bool has_exited(int rank) const = 0;
    // A rank called abort: end the job with `status`.
    virtual void rank_aborted(int status, const std::string& message) = 0;
    // A rank that joined closed its connection without finalize.
    virtual void connection_lost(int rank) = 0;

   protected:
    ~Job() = default;
  };

  // Connections that have not proven the job key (strangers, and ranks before their
  // hello): at most --boot-handshake-limit at once, each for --boot-handshake-timeout, and
  // none gets a buffer larger than a hello frame. Counted in boot.unproven.*.
  struct UnprovenStats {
    std::uint64_t accepted = 0;   // every connection accepted
    std::uint64_t rejected = 0;   // closed for a bad hello or another frame before it
    std::uint64_t evicted = 0;    // silent ones closed to stay within the limit
    std::uint64_t timed_out = 0;  // closed for sending no hello in time
    std::uint64_t peak = 0;       // most waiting at once
  };

  StoreServer(const Options& options, std::string job_id, std::string job_key, EventLoop& loop,
              Job& job);
  StoreServer(const StoreServer&) = delete;
  StoreServer& operator=(const StoreServer&) = delete;

  // Listens: on a Unix socket without --hosts, else on TCP at --boot-addr (or the first
  // non-loopback IPv4 address); address() is then the ranks' SLUICE_BOOT_ADDR.
  bool listen(std::string& error);
  const std::string& address() const { return address_; }

  // `rank` may prove itself with `token` instead of the job key, once.
  void accept_launch_token(int rank, std::string token);

  // Events of the epoll set, by tag source.
  void accept_connections();
  void on_connection_event(std::uint32_t id, std::uint32_t events);

  // A rank exited: reads everything it sent before (a finalize or abort just before exit
  // must count).
  void read_what_rank_left(int rank);

  bool joined(int rank) const { return sessions_[rank].joined; }
  bool finalized(int rank) const { return sessions_[rank].finalized; }

  // --enable-recovery: tells every other connected rank that `rank` failed (once).
  void notify_failure(int rank);
  // A fence needs every rank; fails it if one finalized or exited (see there).
  void fail_fence_if_stuck();

  // Registers boot.unproven.* (the registry must not outlive this server).
  void register_stats(sluice::util::StatsRegistry& registry) const;
  // At the end of the job: how many strangers were closed, when not every one was reported.
  void report_stranger_summary() const;

  // The earliest hello deadline of a connection that has not said hello yet.
  std::optional<Clock::time_point> next_hello_deadline() const;
  void close_silent_connections(Clock::time_point now);

 private:
  // The store's view of one rank.
  struct RankSession {
    bool joined = false;  // sent hello: it is a Sluice process, so it must finalize
    bool finalized = false;
    bool in_fence = false;
    bool failure_notified = false;  // --enable-recovery: the others were told it died
    // --hosts with a launch command that does not pass the environment: the one-time secret
    // this rank proves itself with in hello instead of the job key, which never goes on a
    // command line (ps shows those to every user); hello_ok then hands it the job key.
    std::string launch_token;
    std::string spent_token;  // the launch token once used: its next use is named
    std::optional<std::uint32_t> connection_id;
  };

  struct Connection {
    UniqueFd socket;
    int rank = -1;  // -1 until hello
    sluice::detail::bootwire::FrameReader reader;
    std::string outbox;  // reply bytes the socket could not take yet
    bool close_after_flush = false;
    Clock::time_point accepted_at;
  };

  // A private (0700) temporary directory holding the Unix socket; both are removed once
  // every rank has joined (remove(): the listener stays open, nobody needs the name any
  // more, and a launcher killed later leaves nothing behind), or when this object goes away.
  class BootDirectory {
   public:
    BootDirectory() = default;
    BootDirectory(const BootDirectory&) = delete;
    BootDirectory& operator=(const BootDirectory&) = delete;
    ~BootDirectory() { remove(); }
    bool create(std::string& error);
    void remove();
    const std::string& socket_path() const { return socket_path_; }

   private:
    std::string directory_;
    std::string socket_path_;
  };

  void read_connection(std::uint32_t id, bool until_closed);
  void handle_frame(std::uint32_t id, sluice::detail::bootwire::Frame& frame);
  void handle_hello(std::uint32_t id, std::string_view payload);
  void complete_fence();
  void send_frame(std::uint32_t id, const std::string& frame);
  void flush_outbox(std::uint32_t id);
  void protocol_error(std::uint32_t id, const std::string& what);
  void on_disconnect(std::uint32_t id);
  void close_connection(std::uint32_t id);
  void make_room_for_stranger();
  void report_stranger(const std::string& message);
  Clock::duration hello_timeout() const;

  const Options& options_;
  const std::string job_id_;
  const std::string job_key_;
  EventLoop& loop_;
  Job& job_;
  BootDirectory boot_directory_;
  std::string address_;  // the ranks' SLUICE_BOOT_ADDR
  UniqueFd listener_;
  std::vector<RankSession> sessions_;
  std::unordered_map<std::uint32_t, Connection> connections_;
  std::uint32_t next_connection_id_ = 0;
  int ranks_joined_ = 0;
  std::size_t unproven_ = 0;  // connections with rank < 0
  std::size_t handshake_limit_;
  UnprovenStats unproven_stats_;
  int stranger_reports_ = 0;  // the first few are reported, the rest only counted

  // The key-value store: puts wait in pending_puts_ until the fence that publishes them.
  std::unordered_map<std::string, std::string> store_;
  std::vector<std::pair<std::string, std::string>> pending_puts_;
  int ranks_in_fence_ = 0;
};

}  // namespace sluicerun
