#ifndef _GNU_SOURCE
#error "CLinux must be built with _GNU_SOURCE (see Package.swift)"
#endif
#include "CLinux.h"

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

void clinux_sigset_empty(sigset_t *set) { sigemptyset(set); }
void clinux_sigset_add(sigset_t *set, int signal) { sigaddset(set, signal); }

int clinux_wifexited(int status) { return WIFEXITED(status); }
int clinux_wexitstatus(int status) { return WEXITSTATUS(status); }
int clinux_wifsignaled(int status) { return WIFSIGNALED(status); }
int clinux_wtermsig(int status) { return WTERMSIG(status); }

void clinux_set_thread_name(const char *name) { (void)pthread_setname_np(pthread_self(), name); }

int clinux_spawn_closefrom(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}
