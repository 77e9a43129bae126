// A self-signed certificate (its own CA) for the host name app.test, valid until 2126: a TLS server
// reached by address whose certificate names a host, as the application socket reaches a checked address.
export const APP_TEST_TLS = {
  name: "app.test",
  cert: `-----BEGIN CERTIFICATE-----
MIIBkjCCATigAwIBAgIUNOfXEjgfw0/sTTQtZTQUrJJQSPkwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIYXBwLnRlc3QwIBcNMjYxMTI1MDMyOTUwWhgPMjEyNjExMDEw
MzI5NTBaMBMxETAPBgNVBAMMCGFwcC50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAE3JG5ty4Fs23rbmZ5XkG9TLhfxb/oRN3dyHb3iMi4TLI/Zjt9LP0AcimO
R0SmVCPfDhpM4yPa7Ixo1YSAbfsEY6NoMGYwHQYDVR0OBBYEFG1nDQi/eQolU8g7
gYxJKWtUVHeqMB8GA1UdIwQYMBaAFG1nDQi/eQolU8g7gYxJKWtUVHeqMBMGA1Ud
EQQMMAqCCGFwcC50ZXN0MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAw
RQIhANVQLaxPmwPkHMue4NaKQ+fak//KAt8l4Bjdqv0jbIUdAiB7tuqlzpJv40sZ
gpTXEeyOcH0dxsKTZ6kFpeiX6R0zOg==
-----END CERTIFICATE-----`,
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg5QXmEfM8thilfLTB
dZxZ6wsGAvk/v3aIk2x3PTScGm6hRANCAATckbm3LgWzbetuZnleQb1MuF/Fv+hE
3d3IdveIyLhMsj9mO30s/QByKY5HRKZUI98OGkzjI9rsjGjVhIBt+wRj
-----END PRIVATE KEY-----`,
};

/** A WebSocket server on loopback that presents the app.test certificate; `greet` closes each socket 1000 with it. */
export function serveNamedTls(greet?: string) {
  return Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    tls: { cert: APP_TEST_TLS.cert, key: APP_TEST_TLS.key },
    fetch: (req, srv) => (srv.upgrade(req) ? undefined : new Response("upgrade expected", { status: 426 })),
    websocket: { open: (ws) => void (greet && ws.close(1000, greet)), message() {} },
  });
}
