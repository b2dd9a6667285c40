package storage

import "time"

// timeout bounds how long a store may take to answer a request.
var timeout = 60 * time.Second

// SetTimeout sets how long an object store may take to answer a request
// before the operation fails.
func SetTimeout(d time.Duration) { timeout = d }
