// Command kin-openapi-load loads an OpenAPI document with kin-openapi (the loader under oapi-codegen
// and most Go OpenAPI tooling) and validates it, the way a Go integrator's generator first reads it.
// It exits 0 when the document loads and validates, 1 with kin-openapi's own errors when it does not.
//
// Built in GOPATH mode against Debian's golang-github-getkin-kin-openapi-dev (see
// test/contract/kin-openapi-loads-3.0.test.ts), so nothing is downloaded.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/getkin/kin-openapi/openapi3"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: kin-openapi-load <document.json>")
		os.Exit(2)
	}
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(1)
	}
	if err := doc.Validate(context.Background()); err != nil {
		fmt.Fprintf(os.Stderr, "validate: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("ok: OpenAPI %s, %d paths\n", doc.OpenAPI, len(doc.Paths))
}
