// CLinux: Linux system interfaces Swift's Glibc module does not expose (epoll, eventfd,
// timerfd, signalfd, pty, GNU extensions) plus the few wrappers for function-like macros and
// _GNU_SOURCE-only calls. No logic lives here.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/// accept4(2), hidden behind _GNU_SOURCE in glibc's headers.
int clinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
/// pipe2(2), hidden behind _GNU_SOURCE.
int clinux_pipe2(int fds[2], int flags);
/// ptsname_r(3), hidden behind _GNU_SOURCE.
int clinux_ptsname_r(int fd, char *buf, size_t len);
/// The current thread's errno (a macro in C).
int clinux_errno(void);
/// Fills a sockaddr_un for `path`; returns the length to pass to bind/connect, or -1 if too long.
socklen_t clinux_sockaddr_un(struct sockaddr_un *addr, const char *path);
/// The user id of the process at the other end of a connected unix socket (SO_PEERCRED; struct
/// ucred needs _GNU_SOURCE, which Swift's Glibc module does not define). 0 or -1 with errno.
int clinux_peer_uid(int fd, uid_t *uid);
/// The owner of the TCP socket of this network namespace whose own end is `local`:`localPort`
/// and whose other end is `remote`:`remotePort` (addresses 4 bytes for AF_INET, 16 for
/// AF_INET6; ports in host order), asked of the kernel's sock_diag netlink interface: one exact
/// lookup, no table read. 0 with *uid set, or -1 with errno (ENOENT: no such socket here).
/// The kernel reports a socket its process already closed as root's.
int clinux_tcp_socket_owner(int family, const uint8_t *local, uint16_t localPort, const uint8_t *remote,
                            uint16_t remotePort, uid_t *uid);
/// sigset helpers (sigaddset and friends are macros in some libcs).
void clinux_sigset_empty(sigset_t *set);
void clinux_sigset_add(sigset_t *set, int signal);
/// WIFEXITED/WEXITSTATUS/WIFSIGNALED/WTERMSIG for a waitpid status.
int clinux_wifexited(int status);
int clinux_wexitstatus(int status);
int clinux_wifsignaled(int status);
int clinux_wtermsig(int status);
/// posix_spawn_file_actions_addclosefrom_np(3) (glibc 2.34+, GNU): the child closes every
/// descriptor from `from` up before exec.
int clinux_spawn_closefrom(posix_spawn_file_actions_t *actions, int from);
/// Names the calling thread (pthread_setname_np is a GNU extension).
void clinux_set_thread_name(const char *name);
/// gettid(2) (a GNU extension in <unistd.h>): the calling thread's kernel id.
pid_t clinux_gettid(void);
/// malloc_trim(0) (glibc's <malloc.h>, which Swift's Glibc module does not include): gives the
/// free pages of every malloc arena back to the kernel. Returns 1 if any memory was released.
int clinux_malloc_trim(void);

/// How `clinux_spawn_supervised` sets up its child (see ChildProcess.Supervision).
typedef struct clinux_supervised_spawn {
    const char *path;
    char *const *argv;
    /// The environment; `listen_pid_entry`, when not NULL, is one of its entries, with room
    /// after "LISTEN_PID=" for the child's pid (written in the child, after the fork).
    char *const *envp;
    char *listen_pid_entry;
    /// Descriptors the child gets as 3, 4, ... (every other one above 2 is closed).
    const int *passing;
    int passing_count;
    /// Standard output and error (-1: inherited).
    int log_fd;
    /// Credentials to take before exec (-1: keep ours).
    int uid;
    int gid;
    /// Sent to the child when the thread that spawned it ends (0: none), and our pid to
    /// check that we did not end before the setting took.
    int death_signal;
    int parent_pid;
} clinux_supervised_spawn;

/// Forks (_Fork: no atfork handlers; the child calls only async-signal-safe functions and raw
/// syscalls), sets up the child as described, and execs. Returns 0 with *pid set once the exec
/// succeeded, or the errno of the step that failed in the child (reported through a
/// close-on-exec pipe) or of the fork.
int clinux_spawn_supervised(const clinux_supervised_spawn *spawn, pid_t *pid);

/// Gives every thread of the process `uid`, `gid` and the one supplementary group `gid` (glibc's
/// setgroups/setresgid/setresuid apply to all threads), and leaves the calling thread exactly the
/// capabilities in `keep` (bit n = capability n; 0 for none) as permitted and effective; the other
/// threads lose all of theirs with the uid change. Returns 0, or the errno of the failing step
/// with `*step` naming it.
int clinux_drop_privileges(uid_t uid, gid_t gid, uint64_t keep, const char **step);
/// The calling thread's effective and permitted capability sets (capget); 0 or an errno.
int clinux_capabilities(uint64_t *effective, uint64_t *permitted);
/// CAP_NET_ADMIN's bit, for `keep` (the rfcomm ioctls' capability).
uint64_t clinux_cap_net_admin_mask(void);

/// prctl(PR_SET_DUMPABLE, dumpable): 0 or an errno. (prctl is variadic: Swift cannot call it.)
int clinux_set_dumpable(int dumpable);
/// prctl(PR_GET_DUMPABLE): 0, 1 or 2, or -1 with errno set.
int clinux_dumpable(void);
