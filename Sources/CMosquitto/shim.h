// Debian's libmosquitto (libmosquitto-dev, pkg-config libmosquitto): the MQTT client of fleet
// publishing (Sources/Fleet). Only Fleet imports it.
#include <mosquitto.h>
