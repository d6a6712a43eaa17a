//! The certificate verifiers. `-k/--insecure`: one that accepts any certificate for any name,
//! and still checks the handshake's signatures with the certificate's key (as OpenSSL clients
//! with verification off do), so that an insecure handshake costs what a real one does minus
//! the chain. `--cacert`: webpki's, plus the self-signed CA:TRUE server certificate ([`CaFile`]).

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{verify_server_name, WebPkiServerVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{
    CertificateError, DigitallySignedStruct, Error, OtherError, RootCertStore, SignatureScheme,
};
use std::sync::Arc;

#[derive(Debug)]
pub(super) struct AcceptAnyCertificate {
    provider: Arc<CryptoProvider>,
}

impl AcceptAnyCertificate {
    pub(super) fn new(provider: Arc<CryptoProvider>) -> Arc<Self> {
        Arc::new(AcceptAnyCertificate { provider })
    }
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `--cacert FILE`: the file's certificates are the trust anchors, checked by webpki as any
/// chain is. One case more, as curl and OpenSSL (trusted-first) accept it: a server certificate
/// that is exactly one of the file's, but marked CA:TRUE (what `openssl req -x509` makes), which
/// webpki refuses as an end entity. It is then trusted when it names the server; its dates were
/// checked by webpki before it looked at CA:TRUE (a test with an expired one keeps that so), and
/// the handshake's signatures are checked with its key as always.
#[derive(Debug)]
pub(super) struct CaFile {
    webpki: Arc<WebPkiServerVerifier>,
    certs: Vec<CertificateDer<'static>>,
}

impl CaFile {
    pub(super) fn new(
        certs: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Arc<Self>, String> {
        let mut roots = RootCertStore::empty();
        for c in &certs {
            roots.add(c.clone()).map_err(|e| e.to_string())?;
        }
        let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Arc::new(CaFile { webpki, certs }))
    }
}

/// Whether rustls' `Other` certificate error is webpki's "a CA certificate used as end entity".
pub(super) fn is_ca_as_end_entity(e: &OtherError) -> bool {
    matches!(
        e.0.downcast_ref::<webpki::Error>(),
        Some(webpki::Error::CaUsedAsEndEntity)
    )
}

impl ServerCertVerifier for CaFile {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verdict = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verdict {
            Err(Error::InvalidCertificate(CertificateError::Other(ref e)))
                if is_ca_as_end_entity(e)
                    && self.certs.iter().any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                let cert = ParsedCertificate::try_from(end_entity)?;
                verify_server_name(&cert, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}
