// CRFCOMM: the Linux kernel's RFCOMM TTY ABI (the `rfcomm bind` ioctls) and non-variadic wrappers
// for them, so Swift never calls the variadic ioctl(2). No logic lives here.
//
// Written from the kernel's include/net/bluetooth/rfcomm.h and include/net/bluetooth/bluetooth.h
// (the structs below are what the kernel copies in and out with copy_from_user/copy_to_user in
// net/bluetooth/rfcomm/tty.c) and checked against BlueZ's lib/rfcomm.h and tools/rfcomm.c. We do
// not depend on libbluetooth-dev: the ABI is small and stable (unchanged since Linux 2.6).
//
// Layout notes (checked by the _Static_asserts in CRFCOMM.c and by the Swift tests):
// - bdaddr_t is 6 bytes, __packed, stored little-endian: b[0] is the LAST group of
//   "AA:BB:CC:DD:EE:FF" (0xFF), b[5] the first (0xAA). BlueZ's str2ba/ba2str do the same reversal.
// - struct rfcomm_dev_req and struct rfcomm_dev_info are NOT packed in the kernel: natural
//   alignment applies (2 bytes of padding after the int16_t id, tail padding to 4), 24 bytes each.
// - struct rfcomm_dev_list_req is a uint16_t count followed by the info array at offset 4.
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

// ---- Address family and protocol (include/net/bluetooth/bluetooth.h) ----
// glibc's <sys/socket.h> already defines AF_BLUETOOTH (as PF_BLUETOOTH, 31); BTPROTO_* come only
// from BlueZ's headers. Swift sees the CRFCOMM_* enum constants.
#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#ifndef BTPROTO_RFCOMM
#define BTPROTO_RFCOMM 3
#endif

enum {
    CRFCOMM_AF_BLUETOOTH = 31,
    CRFCOMM_BTPROTO_RFCOMM = 3,
    /// Highest device count the kernel keeps (rfcomm0 ... rfcomm255).
    CRFCOMM_MAX_DEV = 256,
};

// ---- ioctl requests (include/net/bluetooth/rfcomm.h) ----
// The size argument is `int` in the kernel's own definitions even though the structs are larger;
// it is only part of the request number and must match exactly.
#ifndef RFCOMMCREATEDEV
#define RFCOMMCREATEDEV  _IOW('R', 200, int)
#define RFCOMMRELEASEDEV _IOW('R', 201, int)
#define RFCOMMGETDEVLIST _IOR('R', 210, int)
#define RFCOMMGETDEVINFO _IOR('R', 211, int)
#endif

// ---- rfcomm_dev.flags bit numbers (used as 1 << bit) ----
#ifndef RFCOMM_REUSE_DLC
#define RFCOMM_REUSE_DLC     0
#define RFCOMM_RELEASE_ONHUP 1
#define RFCOMM_HANGUP_NOW    2
#define RFCOMM_TTY_ATTACHED  3
#endif

enum {
    /// Adopt the DLC of an already connected RFCOMM socket (`rfcomm connect`); the socket must
    /// be connected or the kernel answers EBADFD. `rfcomm bind` does NOT set it.
    CRFCOMM_FLAG_REUSE_DLC = 1 << 0,
    /// Release the tty when the remote hangs up (only meaningful with REUSE_DLC).
    CRFCOMM_FLAG_RELEASE_ONHUP = 1 << 1,
    /// On release: close the DLC at once.
    CRFCOMM_FLAG_HANGUP_NOW = 1 << 2,
    /// Reported by the kernel: a process has the tty open.
    CRFCOMM_FLAG_TTY_ATTACHED = 1 << 3,
};

// ---- Structures ----
#if !defined(__BLUETOOTH_H) && !defined(CRFCOMM_HAVE_BDADDR_T)
#define CRFCOMM_HAVE_BDADDR_T 1
/// A Bluetooth device address, little-endian (b[0] is the last group of the text form).
typedef struct {
    uint8_t b[6];
} __attribute__((packed)) bdaddr_t;
#endif

#if !defined(__RFCOMM_H)
/// RFCOMMCREATEDEV / RFCOMMRELEASEDEV argument. Not packed: 24 bytes.
struct rfcomm_dev_req {
    int16_t dev_id;   // rfcommN; -1 asks the kernel for the first free number
    uint32_t flags;   // CRFCOMM_FLAG_* (bind: 0)
    bdaddr_t src;     // local adapter; all zero (BDADDR_ANY) lets the kernel route
    bdaddr_t dst;     // the remote device
    uint8_t channel;  // RFCOMM server channel, 1...30
};

/// One bound device, as RFCOMMGETDEVINFO / RFCOMMGETDEVLIST report it. Not packed: 24 bytes.
struct rfcomm_dev_info {
    int16_t id;
    uint32_t flags;
    uint16_t state;   // the DLC's BT_* state (1 connected, 2 open/clean, ... 9 closed)
    bdaddr_t src;
    bdaddr_t dst;
    uint8_t channel;
};

/// RFCOMMGETDEVLIST argument: dev_num is the capacity going in, the count coming out.
struct rfcomm_dev_list_req {
    uint16_t dev_num;
    struct rfcomm_dev_info dev_info[];
};
#endif

/// The layout the compiler gave the structs, for tests that compare it with the kernel's.
struct crfcomm_layout {
    size_t bdaddr_size;
    size_t dev_req_size, dev_req_flags, dev_req_src, dev_req_dst, dev_req_channel;
    size_t dev_info_size, dev_info_flags, dev_info_state, dev_info_src, dev_info_dst, dev_info_channel;
    size_t dev_list_entries;
    unsigned long create_dev, release_dev, get_dev_list, get_dev_info;
};
struct crfcomm_layout crfcomm_layout(void);

// ---- Wrappers: each returns what the syscall returns (-1 with errno set on failure). ----

/// socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_RFCOMM): the control socket the tty
/// ioctls are issued on (BlueZ's `rfcomm` uses the same). Fails with EAFNOSUPPORT when the kernel
/// has no Bluetooth (or outside the initial network namespace), EPROTONOSUPPORT without RFCOMM.
int crfcomm_control_socket(void);
/// ioctl(fd, RFCOMMCREATEDEV, request): the new device number (>= 0) or -1.
int crfcomm_create_dev(int fd, const struct rfcomm_dev_req *request);
/// ioctl(fd, RFCOMMRELEASEDEV, request): 0 or -1.
int crfcomm_release_dev(int fd, const struct rfcomm_dev_req *request);
/// ioctl(fd, RFCOMMGETDEVINFO, info) for info->id: 0 or -1.
int crfcomm_get_dev_info(int fd, struct rfcomm_dev_info *info);
/// ioctl(fd, RFCOMMGETDEVLIST): copies at most `capacity` entries (capped at CRFCOMM_MAX_DEV) to
/// `entries` and returns how many, or -1.
int crfcomm_get_dev_list(int fd, struct rfcomm_dev_info *entries, int capacity);
