package mcpadapter

// DirectStart is directStart, for the external tests.
var DirectStart = directStart
