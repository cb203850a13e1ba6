#!/usr/bin/env python3
"""An independent reader of tactus recordings (docs/design/recording.md), for the tests.

  recording_tool.py payloads FILE          every version's bytes are the test client's payload
                                           for its writer run (iteration, instance); prints the count
  recording_tool.py alter FILE N BYTE      changes byte BYTE of the N-th version's data and
                                           recomputes its chunk's CRCs (a run that wrote otherwise)
  recording_tool.py switches FILE          prints each switch record: from, to, iteration (no time)
  recording_tool.py keys FILE              prints, sorted, the (schedule, channel, writer, iteration)
                                           of every version (which writer runs were recorded)
"""
import struct
import sys
import zlib

HEADER = 32
CHUNK = 24


def chunks(data):
    at = HEADER
    while at + CHUNK <= len(data):
        magic, ctype, _r, size, _pcrc, _r2, _hcrc = struct.unpack_from('<IHHIIII', data, at)
        assert magic == 0x4B4E4843, f'no CHNK at {at}'
        if at + CHUNK + size > len(data):
            return
        yield at, ctype, size
        at += CHUNK + size


def payload_word(iteration, instance, k):
    return ((iteration << 24) ^ (instance << 4) ^ (k * 0x9e3779b97f4a7c15)) & 0xFFFFFFFFFFFFFFFF


def payloads(path):
    data = open(path, 'rb').read()
    n = 0
    for at, ctype, size in chunks(data):
        if ctype != 3:
            continue
        iteration, _w, _s, _sched, _ch, writer, dsize = struct.unpack_from('<QqqIIII', data, at + CHUNK)
        body = data[at + CHUNK + 40:at + CHUNK + 40 + dsize]
        for k in range(dsize // 8):
            (word,) = struct.unpack_from('<Q', body, 8 * k)
            if word != payload_word(iteration - 1, writer, k):
                print(f'{path}: version at offset {at} (iteration {iteration - 1}, writer {writer}): '
                      f'word {k} is {word:#x}, the writer run wrote {payload_word(iteration - 1, writer, k):#x}')
                return 1
        n += 1
    print(f'{n} versions hold their writer run\'s payload')
    return 0 if n > 0 else 1


def alter(path, index, byte):
    data = bytearray(open(path, 'rb').read())
    versions = [(at, size) for at, ctype, size in chunks(bytes(data)) if ctype == 3]
    at, size = versions[index]
    data[at + CHUNK + 40 + byte] ^= 0x5A
    payload = bytes(data[at + CHUNK:at + CHUNK + size])
    struct.pack_into('<I', data, at + 12, zlib.crc32(payload))
    struct.pack_into('<I', data, at + 20, zlib.crc32(bytes(data[at:at + 20])))
    open(path, 'wb').write(bytes(data))
    return 0


def switches(path):
    data = open(path, 'rb').read()
    none = 0xFFFFFFFF
    for at, ctype, _size in chunks(data):
        if ctype == 5:
            iteration, _ns, source, target = struct.unpack_from('<QqII', data, at + CHUNK)
            print(f'from {"none" if source == none else source} to {"none" if target == none else target} '
                  f'at iteration {iteration}')
    return 0


def keys(path):
    data = open(path, 'rb').read()
    found = []
    for at, ctype, _size in chunks(data):
        if ctype == 3:
            iteration, _w, _s, sched, channel, writer, _d = struct.unpack_from('<QqqIIII', data, at + CHUNK)
            found.append((sched, channel, writer, iteration - 1))
    for k in sorted(found):
        print(*k)
    return 0


if __name__ == '__main__':
    if sys.argv[1] == 'payloads':
        sys.exit(payloads(sys.argv[2]))
    if sys.argv[1] == 'switches':
        sys.exit(switches(sys.argv[2]))
    if sys.argv[1] == 'keys':
        sys.exit(keys(sys.argv[2]))
    sys.exit(alter(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
