"""The TMM client side the tools share: the sample apps' behaviour (tmmclient), hostile TLS peers
(tlsflood), a LocationV2 watcher for a bench (v2_watch)."""
