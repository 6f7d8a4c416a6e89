package selfplay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// CheckZipNames verifies that every member of the zip archive r (size
// bytes) has the same name in the central directory and in its local
// header, as Python's zipfile, and so numpy.load, requires. Go's
// archive/zip reads the central directory alone: without this check a
// byte flipped in a shard's central directory makes a shard that Canopy
// reads and numpy refuses. Archives in the zip64 format are not checked
// (shards never need it).
func CheckZipNames(r io.ReaderAt, size int64) error {
	const eocdLen = 22
	tail := min(size, eocdLen+0xffff)
	buf := make([]byte, tail)
	if _, err := r.ReadAt(buf, size-tail); err != nil && err != io.EOF {
		return err
	}
	e := -1
	for i := len(buf) - eocdLen; i >= 0; i-- {
		if binary.LittleEndian.Uint32(buf[i:]) == 0x06054b50 {
			e = i
			break
		}
	}
	if e < 0 {
		return errors.New("no zip end of central directory record")
	}
	n := int(binary.LittleEndian.Uint16(buf[e+10:]))
	cdSize := int64(binary.LittleEndian.Uint32(buf[e+12:]))
	cdOff := int64(binary.LittleEndian.Uint32(buf[e+16:]))
	if n == 0xffff || cdOff == 0xffffffff || cdSize == 0xffffffff {
		return nil // zip64
	}
	if cdOff+cdSize > size {
		return errors.New("zip central directory outside the file")
	}
	cd := make([]byte, cdSize)
	if _, err := r.ReadAt(cd, cdOff); err != nil {
		return err
	}
	for i, p := 0, 0; i < n; i++ {
		if p+46 > len(cd) || binary.LittleEndian.Uint32(cd[p:]) != 0x02014b50 {
			return fmt.Errorf("zip central directory entry %d is damaged", i+1)
		}
		nl := int(binary.LittleEndian.Uint16(cd[p+28:]))
		xl := int(binary.LittleEndian.Uint16(cd[p+30:]))
		cl := int(binary.LittleEndian.Uint16(cd[p+32:]))
		off := int64(binary.LittleEndian.Uint32(cd[p+42:]))
		if p+46+nl > len(cd) {
			return fmt.Errorf("zip central directory entry %d is damaged", i+1)
		}
		name := cd[p+46 : p+46+nl]
		p += 46 + nl + xl + cl
		if off == 0xffffffff {
			continue // zip64
		}
		var lh [30]byte
		if _, err := r.ReadAt(lh[:], off); err != nil || binary.LittleEndian.Uint32(lh[:]) != 0x04034b50 {
			return fmt.Errorf("zip member %q: no local header at offset %d", name, off)
		}
		ll := int(binary.LittleEndian.Uint16(lh[26:]))
		local := make([]byte, ll)
		if _, err := r.ReadAt(local, off+30); err != nil {
			return fmt.Errorf("zip member %q: damaged local header", name)
		}
		if string(local) != string(name) {
			return fmt.Errorf("zip member named %q in the central directory and %q in its local header (a damaged archive: numpy refuses it)", name, local)
		}
	}
	return nil
}
