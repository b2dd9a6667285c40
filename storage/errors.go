package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	gcs "cloud.google.com/go/storage"
	"github.com/aws/smithy-go"
	"google.golang.org/api/googleapi"
)

// Causes an Error wraps; test them with errors.Is.
var (
	ErrNotExist      = fs.ErrNotExist // no such object or file
	ErrNoBucket      = errors.New("no such bucket")
	ErrPermission    = fs.ErrPermission
	ErrNoCredentials = errors.New("no credentials")
	ErrChanged       = errors.New("object changed while reading")
	// ErrTimeout is a store that does not answer: connections refused or
	// dropped, or no answer or no progress within the Timeout, on every
	// attempt.
	ErrTimeout = errors.New("the store does not answer")
)

// Error is a failed operation on one URI; its message is one line naming
// the URI and the cause.
type Error struct {
	URI string
	Err error
}

func (e *Error) Error() string { return e.URI + ": " + oneLine(e.Err.Error()) }
func (e *Error) Unwrap() error { return e.Err }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cause is a classified error: Is matches the kind, the text keeps the
// client's detail.
type cause struct {
	kind   error
	detail string
}

func (c *cause) Error() string {
	if c.detail == "" {
		return c.kind.Error()
	}
	return c.kind.Error() + " (" + c.detail + ")"
}
func (c *cause) Unwrap() error { return c.kind }

// wrap turns a client error about uri into an *Error with a classified
// cause; nil stays nil and an *Error is returned as it is.
func wrap(uri string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{URI: uri, Err: classify(err)}
}

func classify(err error) error {
	var na *noAnswer
	switch {
	case errors.Is(err, ErrChanged), errors.Is(err, ErrNoCredentials), errors.Is(err, ErrNoBucket), errors.Is(err, ErrTimeout):
		return err
	case errors.As(err, &na):
		return &cause{ErrTimeout, na.detail}
	case errors.Is(err, gcs.ErrBucketNotExist):
		return ErrNoBucket
	case errors.Is(err, gcs.ErrObjectNotExist):
		return noObject{}
	}
	msg := err.Error()
	if strings.Contains(msg, "failed to retrieve credentials") || strings.Contains(msg, "failed to refresh cached credentials") ||
		strings.Contains(msg, "could not find default credentials") {
		return &cause{ErrNoCredentials, shortDetail(msg)}
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return byStatus(ge.Code, "", ge.Message)
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		var code interface{ HTTPStatusCode() int }
		status := 0
		if errors.As(err, &code) {
			status = code.HTTPStatusCode()
		}
		return byStatus(status, ae.ErrorCode(), ae.ErrorMessage())
	}
	return classifyText(msg, err)
}

// classifyText classifies the errors of clients that format their causes
// as text (Beam's s3 filesystem) by the service's error code or status.
func classifyText(msg string, err error) error {
	for _, code := range []string{"NoSuchBucket", "NoSuchKey", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "PreconditionFailed"} {
		if strings.Contains(msg, code) {
			return byStatus(0, code, "")
		}
	}
	for _, status := range []int{http.StatusNotFound, http.StatusForbidden, http.StatusUnauthorized, http.StatusPreconditionFailed} {
		if strings.Contains(msg, fmt.Sprintf("StatusCode: %d,", status)) {
			return byStatus(status, "", shortDetail(msg))
		}
	}
	return err
}

// noObject is a missing object or file: it matches ErrNotExist.
type noObject struct{}

func (noObject) Error() string        { return "no such object" }
func (noObject) Is(target error) bool { return target == ErrNotExist }

// at re-addresses an *Error to uri (a listing made on behalf of uri).
func at(uri string, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return &Error{URI: uri, Err: se.Err}
	}
	return err
}

// byStatus classifies an HTTP status and service error code.
func byStatus(status int, code, detail string) error {
	switch {
	case code == "NoSuchBucket":
		return ErrNoBucket
	case code == "NoSuchKey" || code == "NotFound" || status == http.StatusNotFound:
		return noObject{}
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "ExpiredToken" || status == http.StatusUnauthorized:
		return &cause{ErrNoCredentials, firstNonEmpty(detail, code)}
	case code == "AccessDenied" || status == http.StatusForbidden:
		return &cause{ErrPermission, firstNonEmpty(detail, code)}
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return ErrChanged
	}
	return fmt.Errorf("status %d %s: %s", status, code, detail)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// shortDetail keeps the last clause of a chained client message, which
// names the root cause.
func shortDetail(msg string) string {
	msg = oneLine(msg)
	if len(msg) > 200 {
		msg = msg[len(msg)-200:]
	}
	return msg
}
