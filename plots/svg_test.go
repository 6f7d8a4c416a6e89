package plots

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"image/color"
	"image/png"
	"io"
	"strings"
	"testing"
)

// svgDoc is what the tests read back from a rendered SVG: its text
// elements and the fill colours of its filled paths.
type svgDoc struct {
	texts []svgText
	fills []string // "#RRGGBB" of each filled path, in document order
}

type svgText struct {
	s     string
	style string
}

// parseSVG parses data as XML and collects text and filled paths.
func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(data))
	var inText *svgText
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("rendered SVG does not parse: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			style := attr(el, "style")
			switch el.Name.Local {
			case "text":
				inText = &svgText{style: style}
			case "path":
				if f := styleValue(style, "fill"); f != "none" {
					if f == "" {
						f = "#000000"
					}
					doc.fills = append(doc.fills, f)
				}
			}
		case xml.CharData:
			if inText != nil {
				inText.s += string(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" && inText != nil {
				doc.texts = append(doc.texts, *inText)
				inText = nil
			}
		}
	}
	return doc
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// styleValue returns key's value in a CSS style attribute.
func styleValue(style, key string) string {
	for _, part := range strings.Split(style, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(part), ":"); ok && k == key {
			return v
		}
	}
	return ""
}

// hasText reports whether some text element is exactly s.
func (d svgDoc) hasText(s string) bool {
	for _, x := range d.texts {
		if x.s == s {
			return true
		}
	}
	return false
}

// textContaining counts the text elements containing s.
func (d svgDoc) textContaining(s string) int {
	n := 0
	for _, x := range d.texts {
		if strings.Contains(x.s, s) {
			n++
		}
	}
	return n
}

// countFill counts the filled paths of colour c (to within 1 per
// channel: SVG output rounds see-through colours).
// allText joins every text of the document with spaces (a wrapped title
// reads as one line).
func (d svgDoc) allText() string {
	var b strings.Builder
	for _, x := range d.texts {
		b.WriteString(x.s)
		b.WriteByte(' ')
	}
	return b.String()
}

func (d svgDoc) countFill(c color.Color) int {
	r, g, b, _ := color.NRGBAModel.Convert(c).RGBA()
	want := [3]int{int(r >> 8), int(g >> 8), int(b >> 8)}
	n := 0
	for _, f := range d.fills {
		var got [3]int
		if _, err := fmt.Sscanf(f, "#%02x%02x%02x", &got[0], &got[1], &got[2]); err != nil {
			continue
		}
		close := true
		for i := range got {
			close = close && got[i]-want[i] <= 1 && want[i]-got[i] <= 1
		}
		if close {
			n++
		}
	}
	return n
}

// render renders f as SVG (parsed) and PNG (decoded, its size checked).
func render(t *testing.T, f *Figure) svgDoc {
	t.Helper()
	s, err := f.Bytes("svg")
	if err != nil {
		t.Fatalf("%s as SVG: %v", f.Name, err)
	}
	p, err := f.Bytes("png")
	if err != nil {
		t.Fatalf("%s as PNG: %v", f.Name, err)
	}
	img, err := png.Decode(bytes.NewReader(p))
	if err != nil {
		t.Fatalf("%s: the PNG does not decode: %v", f.Name, err)
	}
	if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
		t.Errorf("%s: PNG of %dx%d pixels", f.Name, b.Dx(), b.Dy())
	}
	return parseSVG(t, s)
}
