// sluicerun (also installed as mpirun and mpiexec): starts N ranks on this host.
#include <fcntl.h>
#include <unistd.h>

#include "launcher.hpp"
#include "options.hpp"
#include "posix.hpp"

int main(int argc, char** argv) {
  // Keep 0/1/2 occupied so no socket or pipe we open lands on a standard stream.
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0) {
      sluicerun::UniqueFd null_fd(open("/dev/null", O_RDWR));
      if (null_fd.get() == fd)
        null_fd.release();  // it landed on the free standard stream: keep it open
      else if (null_fd.valid())
        dup2(null_fd.get(), fd);
    }
  }

  sluicerun::ParseResult parsed = sluicerun::parse_options(argc, argv);
  if (!parsed.options) {
    sluicerun::write_all(parsed.exit_status == 0 ? STDOUT_FILENO : STDERR_FILENO, parsed.message);
    return parsed.exit_status;
  }
  return sluicerun::run_job(*parsed.options);
}
