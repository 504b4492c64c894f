#include "CRFCOMM.h"

#include <errno.h>
#include <string.h>

// The kernel ABI, checked at compile time (see the header for where each number comes from).
_Static_assert(sizeof(bdaddr_t) == 6, "bdaddr_t is 6 packed bytes");
_Static_assert(sizeof(struct rfcomm_dev_req) == 24, "rfcomm_dev_req is naturally aligned, 24 bytes");
_Static_assert(offsetof(struct rfcomm_dev_req, flags) == 4, "2 bytes of padding after dev_id");
_Static_assert(offsetof(struct rfcomm_dev_req, src) == 8, "src follows flags");
_Static_assert(offsetof(struct rfcomm_dev_req, dst) == 14, "dst follows src (bdaddr_t is packed)");
_Static_assert(offsetof(struct rfcomm_dev_req, channel) == 20, "channel follows dst");
_Static_assert(sizeof(struct rfcomm_dev_info) == 24, "rfcomm_dev_info is naturally aligned, 24 bytes");
_Static_assert(offsetof(struct rfcomm_dev_info, state) == 8, "state follows flags");
_Static_assert(offsetof(struct rfcomm_dev_info, src) == 10, "src follows state");
_Static_assert(offsetof(struct rfcomm_dev_info, dst) == 16, "dst follows src");
_Static_assert(offsetof(struct rfcomm_dev_info, channel) == 22, "channel follows dst");
_Static_assert(offsetof(struct rfcomm_dev_list_req, dev_info) == 4, "entries start at offset 4");
#if defined(__x86_64__) || defined(__aarch64__) || defined(__i386__) || defined(__arm__) || defined(__riscv)
// Generic _IOC encoding (dir << 30 | size << 16 | type << 8 | nr), _IOC_WRITE = 1, _IOC_READ = 2.
_Static_assert(RFCOMMCREATEDEV == 0x400452C8UL, "_IOW('R', 200, int)");
_Static_assert(RFCOMMRELEASEDEV == 0x400452C9UL, "_IOW('R', 201, int)");
_Static_assert(RFCOMMGETDEVLIST == 0x800452D2UL, "_IOR('R', 210, int)");
_Static_assert(RFCOMMGETDEVINFO == 0x800452D3UL, "_IOR('R', 211, int)");
#endif

struct crfcomm_layout crfcomm_layout(void) {
    struct crfcomm_layout layout = {
        .bdaddr_size = sizeof(bdaddr_t),
        .dev_req_size = sizeof(struct rfcomm_dev_req),
        .dev_req_flags = offsetof(struct rfcomm_dev_req, flags),
        .dev_req_src = offsetof(struct rfcomm_dev_req, src),
        .dev_req_dst = offsetof(struct rfcomm_dev_req, dst),
        .dev_req_channel = offsetof(struct rfcomm_dev_req, channel),
        .dev_info_size = sizeof(struct rfcomm_dev_info),
        .dev_info_flags = offsetof(struct rfcomm_dev_info, flags),
        .dev_info_state = offsetof(struct rfcomm_dev_info, state),
        .dev_info_src = offsetof(struct rfcomm_dev_info, src),
        .dev_info_dst = offsetof(struct rfcomm_dev_info, dst),
        .dev_info_channel = offsetof(struct rfcomm_dev_info, channel),
        .dev_list_entries = offsetof(struct rfcomm_dev_list_req, dev_info),
        .create_dev = RFCOMMCREATEDEV,
        .release_dev = RFCOMMRELEASEDEV,
        .get_dev_list = RFCOMMGETDEVLIST,
        .get_dev_info = RFCOMMGETDEVINFO,
    };
    return layout;
}

int crfcomm_control_socket(void) {
    return socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_RFCOMM);
}

int crfcomm_create_dev(int fd, const struct rfcomm_dev_req *request) {
    return ioctl(fd, RFCOMMCREATEDEV, request);
}

int crfcomm_release_dev(int fd, const struct rfcomm_dev_req *request) {
    return ioctl(fd, RFCOMMRELEASEDEV, request);
}

int crfcomm_get_dev_info(int fd, struct rfcomm_dev_info *info) {
    return ioctl(fd, RFCOMMGETDEVINFO, info);
}

int crfcomm_get_dev_list(int fd, struct rfcomm_dev_info *entries, int capacity) {
    // The kernel writes 4 + 24 * dev_num bytes; a fixed buffer for the kernel's maximum avoids
    // malloc (6 KiB of stack).
    struct {
        uint16_t dev_num;
        struct rfcomm_dev_info dev_info[CRFCOMM_MAX_DEV];
    } list;
    _Static_assert(offsetof(__typeof__(list), dev_info) == offsetof(struct rfcomm_dev_list_req, dev_info),
                   "same layout as rfcomm_dev_list_req");
    if (capacity <= 0) {
        errno = EINVAL;
        return -1;
    }
    if (capacity > CRFCOMM_MAX_DEV) capacity = CRFCOMM_MAX_DEV;
    memset(&list, 0, sizeof(list));
    list.dev_num = (uint16_t)capacity;
    if (ioctl(fd, RFCOMMGETDEVLIST, &list) < 0) return -1;
    int count = list.dev_num < capacity ? list.dev_num : capacity;
    memcpy(entries, list.dev_info, (size_t)count * sizeof(struct rfcomm_dev_info));
    return count;
}
