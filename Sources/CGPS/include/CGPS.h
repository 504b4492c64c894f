// CGPS: the only code that sees libgps. gps_data_t changes layout between gpsd releases
// (API 11 in gpsd 3.22, 14 in 3.25/3.26, 16 upstream), so Swift gets an opaque session and a
// small flat struct of what the bridge reads. Built against 3.22; the GPSD_API_MAJOR_VERSION
// branches keep newer APIs compiling.
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct cgps_session cgps_session;

/// What gpsd said about one device (a DEVICE object, or one entry of DEVICES).
typedef struct cgps_device {
    char path[128];
    char driver[64];
    char subtype[128];   // often the hardware/firmware version
    char subtype1[128];  // often more version text
    double activated;    // Unix time the device was activated, 0 when it closed
    unsigned int baudrate;
    int flags;           // SEEN_GPS etc.
} cgps_device;

/// Bits of `cgps_read`'s result describing what the line was.
enum {
    CGPS_LINE_NMEA = 1,      // a passed-through NMEA sentence (starts with '$' or '!')
    CGPS_LINE_DEVICE = 2,    // a DEVICE object: cgps_last_device is fresh
    CGPS_LINE_DEVICES = 4,   // a DEVICES object: cgps_device_count/cgps_device_at are fresh
    CGPS_LINE_VERSION = 8,   // a VERSION object
    CGPS_LINE_ERROR = 16,    // an ERROR object from gpsd
    CGPS_LINE_OTHER = 32,    // any other JSON (TPV, SKY, ...)
};

/// Connects to gpsd at host:port. NULL on failure, with *error set to libgps's code.
cgps_session *cgps_open(const char *host, const char *port, int *error);
/// Closes the connection and frees the session.
void cgps_close(cgps_session *session);
/// The socket descriptor (for poll/epoll); owned by the session.
int cgps_fd(const cgps_session *session);
/// ?WATCH={"enable":true,"json":true,...}: JSON reports always, NMEA sentences when `nmea` is
/// non-zero, and only `device`'s data when it is not NULL (gpsd's `"device"` member: gpsd 3.22
/// passes every device's sentences untagged to an unfiltered watch). Returns 0 or -1.
int cgps_watch(cgps_session *session, int nmea, const char *device);
/// Waits up to timeout_us for input: 1 ready, 0 timeout or interrupted by a signal, -1 error.
int cgps_wait(cgps_session *session, int timeout_us);
/// Reads one line into line[0..cap) (NUL-terminated, line end stripped) and returns the
/// CGPS_LINE_* bits; *length receives the line length. Returns -1 when gpsd closed the
/// connection or the socket failed.
int cgps_read(cgps_session *session, char *line, int cap, int *length);
/// Sends a raw command (e.g. "?DEVICES;"). Returns 0 or -1.
int cgps_send(cgps_session *session, const char *command);
/// The device of the last DEVICE object.
void cgps_last_device(const cgps_session *session, cgps_device *out);
/// Entries of the last DEVICES object.
int cgps_device_count(const cgps_session *session);
void cgps_device_at(const cgps_session *session, int index, cgps_device *out);
/// Text of libgps's error code (from cgps_open).
const char *cgps_error_text(int error);
/// GPSD_API_MAJOR_VERSION this shim was built against.
int cgps_api_major(void);
/// gpsd's release string from the last VERSION object ("3.22"), or "".
const char *cgps_release(const cgps_session *session);
