// Package pseudonym replaces user ids by keyed pseudonyms, so that a
// release does not carry the input's ids and two releases made under
// different keys cannot be joined by id.
//
// A pseudonym is the first 128 bits of HMAC-SHA256(key, id), in lower-case
// hex (32 characters). The key is 32 random bytes per release; it is read
// from a file or an environment variable the operator names, or drawn at
// random and, only if asked, written to a path the operator gives (WriteKey,
// create-exclusive, mode 0600). The key is never printed: Key has no String
// method that shows it, and errors name the key's source, never its bytes.
package pseudonym
