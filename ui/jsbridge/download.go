//go:build js && wasm

package jsbridge

import "syscall/js"

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
