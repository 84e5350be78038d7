package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// Decode unmarshals one JSON value into v, a pointer, more strictly than
// encoding/json: every struct field whose json tag lacks omitempty must be
// present, and may be null only if it is a pointer, a slice or a
// json.RawMessage. Unknown fields are ignored, so that later protocol
// versions can add some. The error names the field by its JSON path.
func Decode(raw []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("decode into %T: not a pointer", v)
	}
	if err := checkPresent(raw, t.Elem(), "$"); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	return nil
}

// checkPresent walks raw along t and reports the first required field that
// is missing or null.
func checkPresent(raw json.RawMessage, t reflect.Type, path string) error {
	if t == rawMessageType {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		if isNull(raw) {
			return nil
		}
		return checkPresent(raw, t.Elem(), path)
	case reflect.Slice:
		if isNull(raw) {
			return nil
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("%s: want an array: %w", path, err)
		}
		for i, item := range items {
			if err := checkPresent(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Struct:
		return checkStruct(raw, t, path)
	}
	return nil
}

func checkStruct(raw json.RawMessage, t reflect.Type, path string) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("%s: want an object: %w", path, err)
	}
	if fields == nil {
		return fmt.Errorf("%s: want an object, got null", path)
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		val, ok := fields[name]
		switch {
		case !ok && strings.Contains(opts, "omitempty"):
			continue
		case !ok:
			return fmt.Errorf("%s: missing field %q", path, name)
		case isNull(val) && !nullable(f.Type):
			return fmt.Errorf("%s.%s: must not be null", path, name)
		}
		if err := checkPresent(val, f.Type, path+"."+name); err != nil {
			return err
		}
	}
	return nil
}

func nullable(t reflect.Type) bool {
	return t == rawMessageType || t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice
}

func isNull(raw json.RawMessage) bool {
	return bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}
