#ifndef _GNU_SOURCE
#error "CLinux must be built with _GNU_SOURCE (see Package.swift)"
#endif
#include "CLinux.h"

#include <arpa/inet.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>

int clinux_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    return accept4(fd, addr, len, flags);
}

int clinux_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

int clinux_ptsname_r(int fd, char *buf, size_t len) { return ptsname_r(fd, buf, len); }

int clinux_errno(void) { return errno; }

socklen_t clinux_sockaddr_un(struct sockaddr_un *addr, const char *path) {
    size_t n = strlen(path);
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    if (n >= sizeof(addr->sun_path)) return (socklen_t)-1;
    memcpy(addr->sun_path, path, n + 1);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

int clinux_peer_uid(int fd, uid_t *uid) {
    struct ucred credentials;
    socklen_t length = sizeof(credentials);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return -1;
    *uid = credentials.uid;
    return 0;
}

int clinux_tcp_socket_owner(int family, const uint8_t *local, uint16_t localPort, const uint8_t *remote,
                            uint16_t remotePort, uid_t *uid) {
    if (family != AF_INET && family != AF_INET6) {
        errno = EAFNOSUPPORT;
        return -1;
    }
    struct {
        struct nlmsghdr header;
        struct inet_diag_req_v2 request;
    } message;
    memset(&message, 0, sizeof message);
    message.header.nlmsg_len = sizeof message;
    message.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    message.header.nlmsg_flags = NLM_F_REQUEST;
    message.request.sdiag_family = (uint8_t)family;
    message.request.sdiag_protocol = IPPROTO_TCP;
    message.request.idiag_states = ~0u;
    message.request.id.idiag_sport = htons(localPort);
    message.request.id.idiag_dport = htons(remotePort);
    size_t size = family == AF_INET ? 4 : 16;
    memcpy(message.request.id.idiag_src, local, size);
    memcpy(message.request.id.idiag_dst, remote, size);
    message.request.id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
    message.request.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;

    int fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    if (fd < 0) return -1;
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &message, sizeof message, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    // The kernel answers within sendto: the reply is queued already (MSG_DONTWAIT: never wait).
    union {
        struct nlmsghdr header;
        char bytes[1024];
    } reply;
    ssize_t length = recv(fd, &reply, sizeof reply, MSG_DONTWAIT);
    int saved = errno;
    close(fd);
    if (length < 0) {
        errno = saved;
        return -1;
    }
    if (!NLMSG_OK(&reply.header, (size_t)length)) {
        errno = EPROTO;
        return -1;
    }
    if (reply.header.nlmsg_type == NLMSG_ERROR) {
        const struct nlmsgerr *failure = NLMSG_DATA(&reply.header);
        errno = failure->error < 0 ? -failure->error : EPROTO;
        return -1;
    }
    if (reply.header.nlmsg_type != SOCK_DIAG_BY_FAMILY
        || reply.header.nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
        errno = EPROTO;
        return -1;
    }
    const struct inet_diag_msg *found = NLMSG_DATA(&reply.header);
    *uid = found->idiag_uid;
    return 0;
}

void clinux_sigset_empty(sigset_t *set) { sigemptyset(set); }
void clinux_sigset_add(sigset_t *set, int signal) { sigaddset(set, signal); }

int clinux_wifexited(int status) { return WIFEXITED(status); }
int clinux_wexitstatus(int status) { return WEXITSTATUS(status); }
int clinux_wifsignaled(int status) { return WIFSIGNALED(status); }
int clinux_wtermsig(int status) { return WTERMSIG(status); }

void clinux_set_thread_name(const char *name) { (void)pthread_setname_np(pthread_self(), name); }

pid_t clinux_gettid(void) { return gettid(); }

#include <malloc.h>

int clinux_malloc_trim(void) { return malloc_trim(0); }

int clinux_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#include <sys/prctl.h>
#include <sys/syscall.h>

// Writes `value` in decimal at `out` (NUL-terminated); async-signal-safe.
static void clinux_write_decimal(char *out, long value) {
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + value % 10); value /= 10; } while (value > 0 && n < 23);
    while (n > 0) *out++ = digits[--n];
    *out = 0;
}

// The child's half: only async-signal-safe calls and raw syscalls (the parent is threaded, and
// glibc's setuid & co would try to signal threads that do not exist in the child). Returns the
// errno of the failing step; never returns after a successful exec.
static int clinux_supervised_child(const clinux_supervised_spawn *s, int *reportp) {
    int report = *reportp;
    // Default dispositions and an empty mask: an ignored signal would stay ignored across exec.
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig != SIGKILL && sig != SIGSTOP) (void)sigaction(sig, &dfl, NULL);
    }
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0) return errno;
    // Its own process group: Ctrl-C reaches the parent only, which stops its children in order.
    if (setpgid(0, 0) != 0) return errno;

    // Passed descriptors go to 3, 4, ... by way of numbers above every descriptor in play, so
    // no move overwrites one still to be moved (dup2 onto the same number would keep CLOEXEC).
    int staging = report > s->log_fd ? report : s->log_fd;
    for (int i = 0; i < s->passing_count; i++) if (s->passing[i] > staging) staging = s->passing[i];
    staging += 1;
    for (int i = 0; i < s->passing_count; i++) {
        if (dup2(s->passing[i], staging + i) < 0) return errno;
    }
    int moved_report = staging + s->passing_count;
    if (dup3(report, moved_report, O_CLOEXEC) < 0) return errno;
    report = *reportp = moved_report;
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null < 0) return errno;
    if (dup2(null, 0) < 0) return errno;
    if (s->log_fd >= 0 && (dup2(s->log_fd, 1) < 0 || dup2(s->log_fd, 2) < 0)) return errno;
    for (int i = 0; i < s->passing_count; i++) {
        if (dup2(staging + i, 3 + i) < 0) return errno;
    }
    int report_target = 3 + s->passing_count;
    if (report != report_target) {
        if (dup3(report, report_target, O_CLOEXEC) < 0) return errno;
        report = *reportp = report_target;
    }
    if (syscall(SYS_close_range, (unsigned)report + 1, ~0U, 0) != 0) return errno;

    // Credentials first: changing them clears the parent-death signal (commit_creds).
    if (s->gid >= 0) {
        gid_t groups[1] = {(gid_t)s->gid};
        if (syscall(SYS_setgroups, 1, groups) != 0) return errno;
        if (syscall(SYS_setresgid, s->gid, s->gid, s->gid) != 0) return errno;
    }
    if (s->uid >= 0 && syscall(SYS_setresuid, s->uid, s->uid, s->uid) != 0) return errno;
    if (s->death_signal > 0) {
        if (prctl(PR_SET_PDEATHSIG, s->death_signal) != 0) return errno;
        // The parent may have died before the setting took: then no signal will ever come.
        if (getppid() != s->parent_pid) return ESRCH;
    }
    if (s->listen_pid_entry) {
        // The copy is the child's own (fork), so the parent's environment is untouched.
        clinux_write_decimal(s->listen_pid_entry + sizeof("LISTEN_PID=") - 1, (long)getpid());
    }
    execve(s->path, s->argv, s->envp);
    return errno;
}

int clinux_spawn_supervised(const clinux_supervised_spawn *spawn, pid_t *pid) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return errno;
    pid_t child = _Fork();
    if (child < 0) {
        int error = errno;
        close(ends[0]);
        close(ends[1]);
        return error;
    }
    if (child == 0) {
        close(ends[0]);
        int report = ends[1];  // moved by the child's set-up; it says where
        int error = clinux_supervised_child(spawn, &report);
        (void)!write(report, &error, sizeof(error));
        _exit(127);
    }
    close(ends[1]);
    int error = 0;
    ssize_t got;
    do { got = read(ends[0], &error, sizeof(error)); } while (got < 0 && errno == EINTR);
    close(ends[0]);
    if (got == (ssize_t)sizeof(error)) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
        return error ? error : EIO;
    }
    *pid = child;
    return 0;
}

#include <grp.h>
#include <linux/capability.h>

int clinux_drop_privileges(uid_t uid, gid_t gid, uint64_t keep, const char **step) {
    // Capabilities survive the uid change only with KEEPCAPS (a per-thread setting: the other
    // threads, which do not have it, end with none).
    *step = "prctl(PR_SET_KEEPCAPS)";
    if (keep != 0 && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0) return errno;
    // Groups before the gid, the gid before the uid: each needs the privilege the next gives up.
    *step = "setgroups";
    if (setgroups(1, &gid) != 0) return errno;
    *step = "setresgid";
    if (setresgid(gid, gid, gid) != 0) return errno;
    *step = "setresuid";
    if (setresuid(uid, uid, uid) != 0) return errno;
    *step = "prctl(PR_SET_KEEPCAPS, 0)";
    if (keep != 0 && prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) != 0) return errno;
    // Permitted (all of root's, kept) narrowed to `keep`, and made effective: the uid change
    // cleared the effective set.
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof(data));
    data[0].permitted = data[0].effective = (uint32_t)keep;
    data[1].permitted = data[1].effective = (uint32_t)(keep >> 32);
    *step = "capset";
    if (syscall(SYS_capset, &header, data) != 0) return errno;
    return 0;
}

int clinux_capabilities(uint64_t *effective, uint64_t *permitted) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capget, &header, data) != 0) return errno;
    *effective = (uint64_t)data[0].effective | ((uint64_t)data[1].effective << 32);
    *permitted = (uint64_t)data[0].permitted | ((uint64_t)data[1].permitted << 32);
    return 0;
}

uint64_t clinux_cap_net_admin_mask(void) { return (uint64_t)1 << CAP_NET_ADMIN; }

int clinux_set_dumpable(int dumpable) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)dumpable, 0, 0, 0) == 0 ? 0 : errno;
}

int clinux_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
