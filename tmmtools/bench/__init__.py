"""The Python benchmarks scripts/bench.sh runs (BENCHMARKS.md): the largest V2 gap (gap), TLS
handshakes per second (handshakes), REST latency under an Access Code V2 flood (decrypt_flood)."""
