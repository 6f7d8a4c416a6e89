package multi

// ArgmaxAgreement exports argmaxAgreement to the package's external tests.
var ArgmaxAgreement = argmaxAgreement
