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

// ---------------------------------------------------------------------------------------------
// gpsd's reports (TPV, SKY, GST) as libgps unpacked them: the binary receivers' epochs
// (docs/input.md, "Two sources"). Values gpsd did not send are NaN (libgps's defaults), counts
// and flags -1 where the header says so. Times are split in seconds and nanoseconds as libgps
// keeps them, 0/0 when the report had none.

enum {
    CGPS_LINE_TPV = 64,      // a TPV object: cgps_last_fix is fresh
    CGPS_LINE_SKY = 128,     // a SKY object: cgps_last_sky and cgps_satellite_at are fresh
    CGPS_LINE_GST = 256,     // a GST object: cgps_last_noise is fresh
    CGPS_LINE_MALFORMED = 512,  // a TPV, SKY or GST line that is not well-formed JSON: dropped
};

/// A TPV report.
typedef struct cgps_fix {
    int64_t time_sec;
    int32_t time_nsec;
    int mode;                // 0 not seen, 1 no fix, 2 2D, 3 3D
    int status;              // gpsd 3.22's STATUS_*: 0 none or not said (gpsd omits a plain fix's), 1 GPS, 2 DGPS, 3 RTK fixed, 4 RTK float, 5 DR, 6 GNSS+DR, 7 time only, 8 simulated, 9 P(Y)
    double latitude, longitude;
    double alt_hae, alt_msl, geoid_sep;
    double speed, track, climb;
    double eph, epv;
    double dgps_age;
    int dgps_station;        // -1 when not given
} cgps_fix;

/// A GST report (pseudorange noise: 1-sigma errors in metres).
typedef struct cgps_noise {
    int64_t time_sec;
    int32_t time_nsec;
    double rms, lat_err, lon_err, alt_err;
} cgps_noise;

/// A SKY report's header; its satellites through cgps_satellite_at.
typedef struct cgps_sky {
    int64_t time_sec;
    int32_t time_nsec;
    double pdop, hdop, vdop;
    int satellites_used;     // -1 when not given
    int count;               // satellites listed (0 when the report carried none: DOPs only)
} cgps_sky;

/// One satellite of a SKY report.
typedef struct cgps_satellite {
    int prn;                 // gpsd's NMEA-style number (GLONASS 65-96, Galileo 301-336, BeiDou 401-437, ...)
    int gnssid;              // u-blox numbering: 0 GPS, 1 SBAS, 2 Galileo, 3 BeiDou, 4 IMES, 5 QZSS, 6 GLONASS, 7 NavIC; -1 unknown
    int svid;                // the constellation's own number, 0 when not given
    double elevation, azimuth, snr;
    int used;
} cgps_satellite;

void cgps_last_fix(const cgps_session *session, cgps_fix *out);
void cgps_last_noise(const cgps_session *session, cgps_noise *out);
void cgps_last_sky(const cgps_session *session, cgps_sky *out);
void cgps_satellite_at(const cgps_session *session, int index, cgps_satellite *out);

/// A session with no connection, for unpacking gpsd JSON read from elsewhere (`tmm-bridge
/// decode` of a `gpspipe -w` capture). Free with cgps_close. NULL when out of memory.
cgps_session *cgps_parser(void);
/// Unpacks one line (NUL-terminated, line end optional) as gps_read would have: returns the
/// CGPS_LINE_* bits, CGPS_LINE_NMEA for a sentence (not unpacked), 0 for an empty line or JSON
/// libgps refused. `line` is modified by libgps's parser (it is copied first).
int cgps_unpack(cgps_session *session, const char *line, int length);
