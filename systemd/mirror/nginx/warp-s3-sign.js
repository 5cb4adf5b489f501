// /etc/nginx/warp-mirror/warp-s3-sign.js: signs the mirror's own requests to a private S3
// bucket (AWS Signature Version 4, header form) with the key pair in store.conf. njs 0.7
// (Debian's libnginx-mod-http-js). This is the only place a store credential is used: warpd
// sends the mirror none, and the mirror forwards nothing of the client's request.
//
// Signed: the method (always GET: the cache turns HEAD into GET), the path, no query, and the
// headers host, x-amz-content-sha256 (of the empty body) and x-amz-date. Range is not signed
// (S3 does not require it), so one signature scheme serves every slice.

var crypto = require('crypto');

var EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
var SIGNED_HEADERS = 'host;x-amz-content-sha256;x-amz-date';

// 20261125T184000Z. From nginx's cached clock ($msec), which stays the same while one request is
// prepared, so the x-amz-date header and the signature always name the same second.
function amzDate(r) {
    var seconds = Math.floor(parseFloat(r.variables.msec));
    return new Date(seconds * 1000).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '');
}

// S3's URI encoding of a path: each segment percent-encoded, slashes kept.
function encodePath(path) {
    return path.split('/').map(function (segment) {
        return encodeURIComponent(segment).replace(/[!'()*]/g, function (c) {
            return '%' + c.charCodeAt(0).toString(16).toUpperCase();
        });
    }).join('/');
}

function hmac(key, data) {
    return crypto.createHmac('sha256', key).update(data).digest();
}

// The Authorization header for this (sub)request, or '' (no header at all) without credentials.
function authorization(r) {
    var v = r.variables;
    var accessKey = v.warp_s3_access_key;
    var secretKey = v.warp_s3_secret_key;
    if (!accessKey || !secretKey) {
        return '';
    }
    var date = amzDate(r);
    var day = date.substring(0, 8);
    var region = v.warp_s3_region;
    var scope = day + '/' + region + '/s3/aws4_request';
    var canonical = [
        'GET',
        encodePath(v.warp_upstream_uri),
        '',
        'host:' + v.warp_store_host + '\n'
            + 'x-amz-content-sha256:' + EMPTY_SHA256 + '\n'
            + 'x-amz-date:' + date + '\n',
        SIGNED_HEADERS,
        EMPTY_SHA256
    ].join('\n');
    var toSign = [
        'AWS4-HMAC-SHA256',
        date,
        scope,
        crypto.createHash('sha256').update(canonical).digest('hex')
    ].join('\n');
    var key = hmac(hmac(hmac(hmac('AWS4' + secretKey, day), region), 's3'), 'aws4_request');
    var signature = crypto.createHmac('sha256', key).update(toSign).digest('hex');
    return 'AWS4-HMAC-SHA256 Credential=' + accessKey + '/' + scope
        + ', SignedHeaders=' + SIGNED_HEADERS + ', Signature=' + signature;
}

export default {amzDate, authorization};
