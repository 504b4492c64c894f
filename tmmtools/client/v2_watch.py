# python3 -m tmmtools.client.v2_watch URL [SECONDS]: frames per second, the longest gap and the solution types a
# LocationV2 stream carries (run with /usr/bin/python3: Debian's python3-websockets).
import asyncio, collections, json, sys, time

import websockets


async def main(url, seconds):
    counts = collections.Counter()
    types = collections.Counter()
    longest = 0.0
    async with websockets.connect(url) as ws:
        start = last = time.monotonic()
        while time.monotonic() - start < seconds:
            message = json.loads(await ws.recv())
            now = time.monotonic()
            longest = max(longest, now - last)
            last = now
            counts[int(now - start)] += 1
            types[message.get("solutionType")] += 1
    rates = [counts[s] for s in range(int(seconds))]
    print(f"frames/s: min {min(rates)} max {max(rates)} mean {sum(rates) / len(rates):.1f}")
    print(f"longest gap: {longest * 1000:.0f} ms")
    print("solution types:", dict(types))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 30))
