#include "CGPS.h"

#include <errno.h>
#include <gps.h>
#include <stdlib.h>
#include <string.h>

struct cgps_session {
    struct gps_data_t data;  // 24 KB with API 11: heap, never on a thread stack
    char release[64];        // copied from VERSION: the union holding it is reused
    int last_device_closed;  // the last DEVICE said "activated":0
    char closed_path[GPS_PATH_MAX];
    int unconnected;         // made by cgps_parser: no socket to close
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
    errno = 0;
    if (gps_waiting(&session->data, timeout_us)) return 1;
    // A signal handler ran during the wait: nothing happened to the connection. glibc sends
    // every thread its internal SIGSETXID (which no mask blocks) when the process drops
    // privileges; taken for an error, that made the session drop a healthy gpsd connection.
    if (errno == EINTR) return 0;
    return errno == 0 ? 0 : -1;
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

int cgps_read(cgps_session *session, char *line, int cap, int *length) {
    line[0] = '\0';
    session->data.set = 0;
    int status = gps_read(&session->data, line, cap);
    if (status < 0) return -1;
    size_t n = strnlen(line, (size_t)cap);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    *length = (int)n;
    if (n > 0 && (line[0] == '$' || line[0] == '!')) return CGPS_LINE_NMEA;
    return classify(session, line);
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
    if (line[0] == '$' || line[0] == '!') return CGPS_LINE_NMEA;
    if (line[0] != '{' || (size_t)length >= sizeof(session->scratch)) return 0;
    // libgps's parser writes into the buffer it is given: a copy, NUL-terminated.
    memcpy(session->scratch, line, (size_t)length);
    session->scratch[length] = '\0';
    session->data.set = 0;
    if (gps_unpack(session->scratch, &session->data) != 0) return 0;
    int kind = classify(session, session->scratch);
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
