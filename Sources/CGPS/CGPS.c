#include "CGPS.h"

#include <errno.h>
#include <gps.h>
#include <poll.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

/// libgps's parser for one JSON object, exported by libgps since its JSON protocol (3.x) but
/// declared only in gpsd's private gps_json.h. Called directly, once per line, because
/// `gps_unpack` (and so `gps_read`) loops over a buffer's objects without checking progress:
/// a line like {"class":"TPV","mode":"x","class":"TPV"} makes it spin forever (found by
/// Fuzz/run-gpsd-json.sh), and it throws the parser's status away.
extern int libgps_json_unpack(const char *, struct gps_data_t *, const char **);

/// The longest line kept from gpsd (its longest report, a SKY of 140 signals, is under 10 KB);
/// the read buffer holds two.
enum { CGPS_LINE_MAX = 16384 };

struct cgps_session {
    struct gps_data_t data;  // 24 KB with API 11: heap, never on a thread stack
    char release[64];        // copied from VERSION: the union holding it is reused
    int last_device_closed;  // the last DEVICE said "activated":0
    char closed_path[GPS_PATH_MAX];
    int unconnected;         // made by cgps_parser: no socket to close
    char input[2 * CGPS_LINE_MAX];  // bytes read from gpsd, not yet returned as lines
    size_t input_length;
    int discarding;          // dropping the rest of an overlong line
    char scratch[16384];      // cgps_unpack's copy of the line (gpsd's longest report is ~10 KB)
};

/// gpsd reports a closed device as {"class":"DEVICE","path":"...","activated":0}, which
/// libgps 3.22 fails to unpack (it expects a time string), leaving no DEVICE_SET and a stale
/// dev.path. Recognise it from the line itself.
static int closed_device_line(const char *line, char *path, size_t cap) {
    static const char prefix[] = "{\"class\":\"DEVICE\",";
    if (strncmp(line, prefix, sizeof(prefix) - 1) != 0 || strstr(line, "\"activated\":0") == NULL) return 0;
    const char *start = strstr(line, "\"path\":\"");
    if (start == NULL) return 0;
    start += 8;
    const char *end = strchr(start, '"');
    if (end == NULL || (size_t)(end - start) >= cap) return 0;
    memcpy(path, start, (size_t)(end - start));
    path[end - start] = '\0';
    return 1;
}

static void copy_text(char *dst, size_t cap, const char *src) {
    size_t n = strnlen(src, cap - 1);
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static void flatten(const struct devconfig_t *dev, cgps_device *out) {
    memset(out, 0, sizeof(*out));
    copy_text(out->path, sizeof(out->path), dev->path);
    copy_text(out->driver, sizeof(out->driver), dev->driver);
    copy_text(out->subtype, sizeof(out->subtype), dev->subtype);
#if GPSD_API_MAJOR_VERSION >= 9
    copy_text(out->subtype1, sizeof(out->subtype1), dev->subtype1);
    out->activated = (double)dev->activated.tv_sec + (double)dev->activated.tv_nsec / 1e9;
#else
    out->activated = dev->activated;
#endif
    out->baudrate = dev->baudrate;
    out->flags = dev->flags;
}

cgps_session *cgps_open(const char *host, const char *port, int *error) {
    cgps_session *session = calloc(1, sizeof(*session));
    if (session == NULL) {
        *error = -ENOMEM;
        return NULL;
    }
    if (gps_open(host, port, &session->data) != 0) {
        *error = errno;  // libgps stores its own negative NL_* code in errno
        free(session);
        return NULL;
    }
    *error = 0;
    return session;
}

void cgps_close(cgps_session *session) {
    if (session == NULL) return;
    if (!session->unconnected) (void)gps_close(&session->data);
    free(session);
}

int cgps_fd(const cgps_session *session) { return (int)session->data.gps_fd; }

int cgps_watch(cgps_session *session, int nmea, const char *device) {
    unsigned int flags = WATCH_ENABLE | WATCH_JSON;
    if (nmea) flags |= WATCH_NMEA;
    if (device != NULL) flags |= WATCH_DEVICE;
    // libgps copies `device` into the request (`"device":"PATH"`) when WATCH_DEVICE is set.
    return gps_stream(&session->data, flags, (void *)device) == 0 ? 0 : -1;
}

int cgps_wait(cgps_session *session, int timeout_us) {
    // A whole line already read is ready at once.
    if (memchr(session->input, '\n', session->input_length) != NULL) return 1;
    struct pollfd fd = {.fd = session->data.gps_fd, .events = POLLIN};
    // Milliseconds, rounded up: a deadline is never woken for early.
    int ready = poll(&fd, 1, timeout_us <= 0 ? 0 : (timeout_us + 999) / 1000);
    if (ready > 0) return 1;
    // A signal handler ran during the wait: nothing happened to the connection. glibc sends
    // every thread its internal SIGSETXID (which no mask blocks) when the process drops
    // privileges; taken for an error, that made the session drop a healthy gpsd connection.
    if (ready == 0 || errno == EINTR) return 0;
    return -1;
}

// ---------------------------------------------------------------------------------------------
// libgps's gps_unpack keeps what it parsed before an error and reports no error (libgps_sock.c
// ignores libgps_json_unpack's status), so a truncated or garbled report would pass as a report
// with fewer fields. Reports are therefore checked first: one JSON object, well formed by RFC
// 8259's grammar, nested at most JSON_DEPTH deep. libgps's own types decide the rest (a value of
// the wrong type ends its parse; the fields after it stay unset, never stale).

enum { JSON_DEPTH = 8 };

static const char *json_value(const char *p, int depth);

static const char *json_space(const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    return p;
}

static const char *json_string(const char *p) {
    if (*p++ != '"') return NULL;
    for (;;) {
        unsigned char c = (unsigned char)*p++;
        if (c == '"') return p;
        if (c < 0x20) return NULL;  // the end of the line included
        if (c == '\\') {
            c = (unsigned char)*p++;
            if (c == 'u') {
                for (int i = 0; i < 4; i++, p++) {
                    unsigned char h = (unsigned char)*p;
                    if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F'))) return NULL;
                }
            } else if (strchr("\"\\/bfnrt", c) == NULL || c == '\0') {
                return NULL;
            }
        }
    }
}

static const char *json_digits(const char *p) {
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
    return p;
}

static const char *json_number(const char *p) {
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if ((p = json_digits(p)) == NULL) return NULL;
    if (*p == '.' && (p = json_digits(p + 1)) == NULL) return NULL;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if ((p = json_digits(p)) == NULL) return NULL;
    }
    return p;
}

static const char *json_container(const char *p, int depth, char close) {
    if (depth > JSON_DEPTH) return NULL;
    p = json_space(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
        if (close == '}') {
            if ((p = json_string(p)) == NULL) return NULL;
            p = json_space(p);
            if (*p++ != ':') return NULL;
        }
        if ((p = json_value(json_space(p), depth + 1)) == NULL) return NULL;
        p = json_space(p);
        if (*p == close) return p + 1;
        if (*p++ != ',') return NULL;
        p = json_space(p);
    }
}

static const char *json_value(const char *p, int depth) {
    switch (*p) {
    case '{': return json_container(p, depth, '}');
    case '[': return json_container(p, depth, ']');
    case '"': return json_string(p);
    case 't': return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f': return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n': return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: return json_number(p);
    }
}

/// True when `line` is exactly one well-formed JSON object (surrounding white space allowed).
static int json_well_formed(const char *line) {
    const char *p = json_space(line);
    if (*p != '{') return 0;
    p = json_value(p, 1);
    return p != NULL && *json_space(p) == '\0';
}

/// The class of a gpsd JSON object, from the line itself: gpsd writes "class" first, and the
/// `set` bits cannot tell a TPV from a SKY (both may set TIME_SET and DOPs).
static int report_kind(const char *line, gps_mask_t set) {
    static const char prefix[] = "{\"class\":\"";
    if (strncmp(line, prefix, sizeof(prefix) - 1) != 0) return 0;
    const char *class = line + sizeof(prefix) - 1;
    int kind = 0;
    if (strncmp(class, "TPV\"", 4) == 0) kind = CGPS_LINE_TPV;
    else if (strncmp(class, "SKY\"", 4) == 0 && (set & SATELLITE_SET)) kind = CGPS_LINE_SKY;
    else if (strncmp(class, "GST\"", 4) == 0 && (set & GST_SET)) kind = CGPS_LINE_GST;
    if (kind != 0 && !json_well_formed(line)) return CGPS_LINE_MALFORMED;
    return kind;
}

/// What an unpacked line was (its CGPS_LINE_* bits); `line` is NUL-terminated, line end stripped.
static int classify(cgps_session *session, const char *line) {
    gps_mask_t set = session->data.set;
    int kind = 0;
    session->last_device_closed = closed_device_line(line, session->closed_path, sizeof(session->closed_path));
    if ((set & DEVICE_SET) || session->last_device_closed) kind |= CGPS_LINE_DEVICE;
    if (set & DEVICELIST_SET) kind |= CGPS_LINE_DEVICES;
    if (set & VERSION_SET) {
        kind |= CGPS_LINE_VERSION;
        copy_text(session->release, sizeof(session->release), session->data.version.release);
    }
    if (set & ERROR_SET) kind |= CGPS_LINE_ERROR;
    kind |= report_kind(line, set);
    return kind == 0 ? CGPS_LINE_OTHER : kind;
}

/// Unpacks one JSON line (NUL-terminated) with libgps's parser, once, and classifies it. A report
/// libgps could not parse whole is malformed: libgps keeps what it read before the fault.
static int unpack_json(cgps_session *session, const char *line) {
    session->data.set = 0;
    const char *end = line;
    int status = libgps_json_unpack(line, &session->data, &end);
    int kind = classify(session, line);
    if (status != 0 && (kind & (CGPS_LINE_TPV | CGPS_LINE_SKY | CGPS_LINE_GST))) return CGPS_LINE_MALFORMED;
    return kind;
}

/// Where a report starts inside a `$` line, or -1. gpsd 3.22 leaves a pseudo-NMEA `$GPGSV`
/// unfinished when a satellite has elevation and azimuth but no SNR (gpsd_binary_satellite_dump
/// counts it, then skips it) and prints its next report on the same line:
/// `$GPGSV,3,1,11,07,53,074,43,...,30,76,152,37{"class":"TPV",...}` (oncore-binary-pos-hold.log).
/// The sentence is lost either way (it has no checksum); the report is not. A finished sentence
/// (ending in a `*hh` checksum) is the receiver's own: what it holds is text, not gpsd's report.
static long glued_report(const char *line, size_t length) {
    if (length >= 3 && line[length - 3] == '*') return -1;
    const char *brace = memchr(line, '{', length);
    if (brace == NULL) return -1;
    static const char class_key[] = "{\"class\":\"";
    size_t rest = length - (size_t)(brace - line);
    if (rest < sizeof(class_key) - 1 || memcmp(brace, class_key, sizeof(class_key) - 1) != 0) return -1;
    return brace - line;
}

/// A report glued to an unfinished sentence, moved to the start of `line` and unpacked: only a
/// TPV, SKY or GST counts (never a device list or a version: gpsd's own lines come alone).
static int unpack_glued(cgps_session *session, char *line, long start, int *length) {
    size_t n = (size_t)*length - (size_t)start;
    memmove(line, line + start, n + 1);
    *length = (int)n;
    int kind = unpack_json(session, line);
    return kind & (CGPS_LINE_TPV | CGPS_LINE_SKY | CGPS_LINE_GST | CGPS_LINE_MALFORMED) ? kind : CGPS_LINE_OTHER;
}

int cgps_read(cgps_session *session, char *line, int cap, int *length) {
    line[0] = '\0';
    *length = 0;
    char *newline = memchr(session->input, '\n', session->input_length);
    if (newline == NULL) {
        if (session->input_length == sizeof(session->input)) {
            // No line end in two line lengths: drop it all, and the rest of the line after it.
            session->input_length = 0;
            session->discarding = 1;
            return CGPS_LINE_OVERLONG;
        }
        ssize_t n = read(session->data.gps_fd, session->input + session->input_length,
                         sizeof(session->input) - session->input_length);
        if (n == 0) return -1;
        if (n < 0) return errno == EINTR || errno == EAGAIN ? CGPS_LINE_NONE : -1;
        session->input_length += (size_t)n;
        newline = memchr(session->input, '\n', session->input_length);
        if (newline == NULL) return CGPS_LINE_NONE;
    }
    size_t n = (size_t)(newline - session->input);
    int discard = session->discarding || n >= (size_t)cap || n >= CGPS_LINE_MAX;
    if (!discard) {
        memcpy(line, session->input, n);
        line[n] = '\0';
    }
    session->input_length -= n + 1;
    memmove(session->input, newline + 1, session->input_length);
    if (discard) {
        int was_discarding = session->discarding;
        session->discarding = 0;
        return was_discarding ? CGPS_LINE_NONE : CGPS_LINE_OVERLONG;
    }
    while (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
    *length = (int)n;
    if (n == 0) return CGPS_LINE_NONE;
    if (line[0] == '$' || line[0] == '!') {
        long glued = glued_report(line, n);
        return glued < 0 ? CGPS_LINE_NMEA : unpack_glued(session, line, glued, length);
    }
    if (line[0] != '{') return CGPS_LINE_OTHER;
    return unpack_json(session, line);
}

cgps_session *cgps_parser(void) {
    cgps_session *session = calloc(1, sizeof(*session));
    if (session == NULL) return NULL;
    session->data.gps_fd = -1;
    session->unconnected = 1;
    return session;
}

int cgps_unpack(cgps_session *session, const char *line, int length) {
    while (length > 0 && (line[length - 1] == '\n' || line[length - 1] == '\r')) length--;
    if (length <= 0) return 0;
    long glued = -1;
    if (line[0] == '$' || line[0] == '!') {
        glued = glued_report(line, (size_t)length);
        if (glued < 0) return CGPS_LINE_NMEA;
    } else if (line[0] != '{') {
        return 0;
    }
    if ((size_t)length >= sizeof(session->scratch)) return 0;
    // libgps's parser writes into the buffer it is given: a copy, NUL-terminated.
    memcpy(session->scratch, line, (size_t)length);
    session->scratch[length] = '\0';
    int kind = glued < 0 ? unpack_json(session, session->scratch) : unpack_glued(session, session->scratch, glued, &length);
    if (kind & CGPS_LINE_MALFORMED) return 0;
    return kind == CGPS_LINE_OTHER && session->data.set == 0 ? 0 : kind;
}

static void split_time(timespec_t time, int64_t *sec, int32_t *nsec) {
    *sec = (int64_t)time.tv_sec;
    *nsec = (int32_t)time.tv_nsec;
}

void cgps_last_fix(const cgps_session *session, cgps_fix *out) {
    const struct gps_fix_t *fix = &session->data.fix;
    split_time(fix->time, &out->time_sec, &out->time_nsec);
    out->mode = fix->mode;
#if GPSD_API_MAJOR_VERSION >= 10
    out->status = fix->status;
#else
    out->status = session->data.status;
#endif
    out->latitude = fix->latitude;
    out->longitude = fix->longitude;
    out->alt_hae = fix->altHAE;
    out->alt_msl = fix->altMSL;
    out->geoid_sep = fix->geoid_sep;
    out->speed = fix->speed;
    out->track = fix->track;
    out->climb = fix->climb;
    out->eph = fix->eph;
    out->epv = fix->epv;
    out->dgps_age = fix->dgps_age;
    out->dgps_station = fix->dgps_station;
}

void cgps_last_noise(const cgps_session *session, cgps_noise *out) {
    const struct gst_t *gst = &session->data.gst;
    split_time(gst->utctime, &out->time_sec, &out->time_nsec);
    out->rms = gst->rms_deviation;
    out->lat_err = gst->lat_err_deviation;
    out->lon_err = gst->lon_err_deviation;
    out->alt_err = gst->alt_err_deviation;
}

void cgps_last_sky(const cgps_session *session, cgps_sky *out) {
    split_time(session->data.skyview_time, &out->time_sec, &out->time_nsec);
    out->pdop = session->data.dop.pdop;
    out->hdop = session->data.dop.hdop;
    out->vdop = session->data.dop.vdop;
    out->satellites_used = session->data.satellites_used;
    int count = session->data.satellites_visible;
    out->count = count < 0 ? 0 : (count > MAXCHANNELS ? MAXCHANNELS : count);
}

void cgps_satellite_at(const cgps_session *session, int index, cgps_satellite *out) {
    memset(out, 0, sizeof(*out));
    if (index < 0 || index >= MAXCHANNELS) return;
    const struct satellite_t *sat = &session->data.skyview[index];
    out->prn = sat->PRN;
    out->gnssid = sat->svid != 0 ? (int)sat->gnssid : -1;
    out->svid = sat->svid;
    out->elevation = sat->elevation;
    out->azimuth = sat->azimuth;
    out->snr = sat->ss;
    out->used = sat->used ? 1 : 0;
}

int cgps_send(cgps_session *session, const char *command) {
    return gps_send(&session->data, "%s", command) == 0 ? 0 : -1;
}

void cgps_last_device(const cgps_session *session, cgps_device *out) {
    flatten(&session->data.dev, out);
    if (session->last_device_closed) {
        memset(out, 0, sizeof(*out));
        copy_text(out->path, sizeof(out->path), session->closed_path);
    }
}

int cgps_device_count(const cgps_session *session) { return session->data.devices.ndevices; }

void cgps_device_at(const cgps_session *session, int index, cgps_device *out) {
    if (index < 0 || index >= session->data.devices.ndevices || index >= MAXUSERDEVS) {
        memset(out, 0, sizeof(*out));
        return;
    }
    flatten(&session->data.devices.list[index], out);
}

const char *cgps_error_text(int error) { return gps_errstr(error); }

int cgps_api_major(void) { return GPSD_API_MAJOR_VERSION; }

const char *cgps_release(const cgps_session *session) { return session->release; }
