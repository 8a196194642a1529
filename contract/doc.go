// Package contract holds the contract tests of the API: docs/api/openapi.yaml
// describes the API as this project reads it, and the tests validate every
// request the client sends (polling and the admin surface's writes) and
// every answer the simulator gives against it, so that the client, the
// admin surface and the simulator cannot drift from the document, nor from
// each other. It has no code of its own.
package contract
