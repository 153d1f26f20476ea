//go:build js && wasm

package jsbridge

import (
	"errors"
	"fmt"
	"syscall/js"
)

// Download offers data to the visitor as a file called name (a Blob, an
// object URL and a click on a temporary <a download>): nothing leaves the
// browser. The URL is revoked a minute later, when the download has long
// read it.
func (b *Bridge) Download(name, mime string, data []byte) {
	doc := b.global.Get("document")
	urlAPI := b.global.Get("URL")
	if !doc.Truthy() || !urlAPI.Truthy() {
		return
	}
	arr := b.global.Get("Uint8Array").New(len(data))
	js.CopyBytesToJS(arr, data)
	blob := b.global.Get("Blob").New([]any{arr}, map[string]any{"type": mime})
	u := urlAPI.Call("createObjectURL", blob)
	a := doc.Call("createElement", "a")
	a.Set("href", u)
	a.Set("download", name)
	a.Get("style").Set("display", "none")
	doc.Get("body").Call("appendChild", a)
	a.Call("click")
	a.Call("remove")
	var revoke js.Func
	revoke = js.FuncOf(func(js.Value, []js.Value) any {
		urlAPI.Call("revokeObjectURL", u)
		revoke.Release()
		return nil
	})
	b.global.Call("setTimeout", revoke, 60000)
}

// ReadFiles reads the files picked in the <input type="file"> with the
// given id and calls done with their names (a picked folder's files as
// folder/name, from webkitRelativePath), their sizes and their bytes.
// check sees the names and sizes before anything is read and may refuse
// them (then done gets its error and nothing is read).
func (b *Bridge) ReadFiles(inputID string, check func(names []string, sizes []int64) error, done func(names []string, data [][]byte, err error)) {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		done(nil, nil, errors.New("no document"))
		return
	}
	el := doc.Call("getElementById", inputID)
	if !el.Truthy() || !el.Get("files").Truthy() {
		done(nil, nil, errors.New("no file input #"+inputID))
		return
	}
	b.readFileList(el.Get("files"), check, done)
}

// OnDropFiles calls check and done, as ReadFiles does, with the files
// dropped on the element with the given id (found when the drop happens,
// so the element may come and go).
func (b *Bridge) OnDropFiles(id string, check func(names []string, sizes []int64) error, done func(names []string, data [][]byte, err error)) {
	doc := b.global.Get("document")
	if !doc.Truthy() {
		return
	}
	target := func(ev js.Value) bool {
		t := ev.Get("target")
		return t.Truthy() && t.Get("closest").Truthy() && t.Call("closest", "#"+id).Truthy()
	}
	over := js.FuncOf(func(_ js.Value, args []js.Value) any {
		if target(args[0]) {
			args[0].Call("preventDefault")
		}
		return nil
	})
	drop := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ev := args[0]
		if !target(ev) {
			return nil
		}
		ev.Call("preventDefault")
		files := ev.Get("dataTransfer").Get("files")
		go b.readFileList(files, check, done)
		return nil
	})
	b.keep(over)
	b.keep(drop)
	doc.Call("addEventListener", "dragover", over)
	doc.Call("addEventListener", "drop", drop)
}

// readFileList reads a FileList with File.arrayBuffer, one file after
// the other.
func (b *Bridge) readFileList(files js.Value, check func([]string, []int64) error, done func([]string, [][]byte, error)) {
	n := files.Get("length").Int()
	names := make([]string, n)
	sizes := make([]int64, n)
	for i := 0; i < n; i++ {
		f := files.Call("item", i)
		name := f.Get("name").String()
		if rel := f.Get("webkitRelativePath"); rel.Type() == js.TypeString && rel.String() != "" {
			name = rel.String()
		}
		names[i], sizes[i] = name, int64(f.Get("size").Float())
	}
	if err := check(names, sizes); err != nil {
		done(names, nil, err)
		return
	}
	data := make([][]byte, n)
	var next func(i int)
	next = func(i int) {
		if i == n {
			done(names, data, nil)
			return
		}
		var then, fail js.Func
		release := func() { then.Release(); fail.Release() }
		then = js.FuncOf(func(_ js.Value, args []js.Value) any {
			arr := b.global.Get("Uint8Array").New(args[0])
			buf := make([]byte, arr.Get("length").Int())
			js.CopyBytesToGo(buf, arr)
			data[i] = buf
			release()
			go next(i + 1)
			return nil
		})
		fail = js.FuncOf(func(_ js.Value, args []js.Value) any {
			release()
			go done(names, nil, fmt.Errorf("%s could not be read: %s", names[i], args[0].Call("toString").String()))
			return nil
		})
		files.Call("item", i).Call("arrayBuffer").Call("then", then, fail)
	}
	next(0)
}
