/* internal JSON helpers of oci-spec (placeholder) */
