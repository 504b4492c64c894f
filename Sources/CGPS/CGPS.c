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
    (void)gps_close(&session->data);
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

int cgps_read(cgps_session *session, char *line, int cap, int *length) {
    line[0] = '\0';
    session->data.set = 0;
    int status = gps_read(&session->data, line, cap);
    if (status < 0) return -1;
    size_t n = strnlen(line, (size_t)cap);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) line[--n] = '\0';
    *length = (int)n;
    if (n > 0 && (line[0] == '$' || line[0] == '!')) return CGPS_LINE_NMEA;
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
    return kind == 0 ? CGPS_LINE_OTHER : kind;
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
